"""Expense approval, version 2, deployed without version 1 (test_expense_versions.py).

Against ``examples/expense_approval.py`` (version 1):

- ``manager_approval`` is renamed ``manager_review`` and its slot ``manager_approval``
  is renamed ``sign_off``: runs there stay, holder and clock ledgers kept;
- ``awaiting_answer`` is removed: finance no longer asks questions, runs waiting for
  an answer go back to finance (``to("submitted")``);
- ``payment`` gains a ``receipts_check`` slot, opened when runs there migrate, and
  their payment clock restarts (version 2 gives payment 3 days from the migration);
- ``submitted`` is unchanged: runs there stay as they are.
"""

from __future__ import annotations

from taskflow import (
    Event,
    Field,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    business,
    migration,
    milestone,
    payload,
    reminder,
    subject,
    who,
)

submitter = who.id(subject.submitted_by)


class ExpenseApprovalV2(Workflow):
    """An expense claim is reviewed by finance, signed off by a manager when large, then paid."""

    name = "expense-approval"
    version = 2
    tracks = "expense"
    calendar = "uk-london"
    correlate_by = subject.reference
    events = [Event("reviewed", raisers=who.role("finance") - submitter)]
    migrations = [
        migration.from_version(
            1,
            submitted=migration.stay,
            awaiting_answer=migration.to("submitted"),
            manager_approval=migration.stay(
                "manager_review", slots={"manager_approval": "sign_off"}
            ),
            payment=migration.stay(restart_clocks=True),
            # Version 1's automatic payout (an API payout in flight) becomes the manual one.
            paying=migration.to("payment"),
        )
    ]

    submitted = State(
        initial=True,
        label="Finance review",
        slots=[
            Slot(
                "finance_review",
                waits_for="reviewed",
                label="Review expense {subject.reference}",
                fields=[
                    Field.choice("decision", ["approve", "reject", "query"]),
                    Field.text("comment", required=False),
                ],
                candidates=who.role("finance") - submitter,
                delegates=who.role("finance-lead"),
                milestones=[
                    milestone.assigned(within=business.hours(4)),
                    milestone.finished(within=business.days(2)),
                ],
                reminders=[
                    reminder.at(0.75, of="finished", notify=who.holder() | who.candidates()),
                    reminder.on_breach("assigned", escalate_to=who.role("finance-lead")),
                ],
            )
        ],
        then=[
            Route("rejected", when=payload.finance_review.decision == "reject"),
            Route("manager_review", when=subject.amount > 1000),
            Route("payment"),
        ],
        moves=[Move("withdraw", to="withdrawn", by=submitter)],
    )

    manager_review = State(
        label="Manager sign-off",
        slots=[
            Slot(
                "sign_off",
                waits_for="approved",
                label="Sign off {subject.reference} by {subject.submitted_by}",
                fields=[
                    Field.choice("decision", ["approve", "reject"]),
                    Field.text("comment", required=False),
                ],
                candidates=(who.attr("reports") == subject.submitted_by) - submitter,
                delegates=who.role("finance-lead"),
                milestones=[milestone.finished(within=business.days(3))],
                reminders=[reminder.at(0.5, of="finished", notify=who.holder())],
            )
        ],
        then=[
            Route("rejected", when=payload.sign_off.decision == "reject"),
            Route("payment"),
        ],
    )

    payment = State(
        label="Payment",
        slots=[
            Slot(
                "payment",
                waits_for="paid",
                label="Pay {subject.reference} to {subject.submitted_by}",
                fields=[Field.text("payment_reference"), Field.date("paid_on")],
                candidates=who.role("accounts-payable"),
                milestones=[milestone.finished(within=business.days(3))],
                reminders=[reminder.on_breach("finished", notify=who.role("finance-lead"))],
            ),
            Slot(
                "receipts_check",
                label="Check the receipts of {subject.reference}",
                candidates=who.role("finance") - submitter,
                milestones=[milestone.finished(within=business.days(1))],
            ),
        ],
        then=[Route("paid")],
    )

    paid = State(terminal=True, label="Paid")
    rejected = State(terminal=True, label="Rejected")
    withdrawn = State(terminal=True, label="Withdrawn")
