"""Expense approval: finance checks every claim; large ones also need the submitter's manager.

The story, as the finance team tells it:

1. An employee submits an expense claim. Someone in finance, never the
   employee themselves, reviews it: they should pick it up within 4 business
   hours and decide within 2 business days (London office hours). At 75 % of
   those 2 days the reviewer is nudged; if nobody picks the claim up in time,
   or the decision is late, the finance lead is brought in.
2. Finance approves, rejects, or sends a question back to the employee. A
   question pauses nothing on our side: the claim waits for the employee's
   answer, and is withdrawn if they do not answer within two weeks.
3. Claims over 1000 also need the approval of the employee's own manager.
4. Approved claims are paid. A claim whose subject says ``"payout": "api"`` is
   posted to the payments service (``TASKFLOW_PAYMENTS_URL``) by an automatic
   step, retried with exponential backoff while the service is unavailable;
   if the service refuses it, or stays down, accounts payable pays it by hand.
   Other claims go to accounts payable directly, who pay them and record the
   payment reference.

The application that owns expenses starts a run per claim with the claim as
the subject, e.g.::

    {"reference": "EXP-2026-0042", "amount": 1250.00, "currency": "GBP",
     "submitted_by": "bob", "department": "sales", "receipts": 3}
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from taskflow import (
    Event,
    Exponential,
    Field,
    Move,
    OnError,
    Precondition,
    Route,
    Slot,
    State,
    Workflow,
    business,
    milestone,
    payload,
    real,
    reminder,
    subject,
    timeout,
    who,
)

#: Above this amount (in the claim's currency) the employee's manager must approve too.
MANAGER_APPROVAL_ABOVE = 1000

#: The employee who submitted the claim: they may never approve their own money.
submitter = who.id(subject.submitted_by)

#: Claims paid through the payments service rather than by accounts payable's hand.
paid_by_api = subject.payout == "api"


class PaymentRefused(Exception):
    """The payments service refused the payment (4xx): retrying will not change its mind."""


class PaymentUnavailable(Exception):
    """The payments service could not be reached or failed (5xx): worth another attempt."""


async def post_payment(ctx: Any) -> dict[str, Any]:
    """Post the claim to the payments service (``TASKFLOW_PAYMENTS_URL``).

    The step's idempotency key travels as ``Idempotency-Key``: a repeated attempt (a retry,
    or a worker that died mid-call) is answered once by the service.
    """
    claim = ctx.subject
    body = {
        "reference": claim.get("reference"),
        "amount": claim.get("amount"),
        "currency": claim.get("currency"),
        "payee": claim.get("submitted_by"),
    }
    try:
        async with httpx.AsyncClient(timeout=15) as http:
            response = await http.post(
                ctx.settings.payments_url,
                json=body,
                headers={"Idempotency-Key": ctx.idempotency_key},
            )
    except httpx.HTTPError as exc:
        raise PaymentUnavailable(f"the payments service is unreachable: {exc}") from exc
    if response.status_code >= 500:
        raise PaymentUnavailable(f"the payments service answered {response.status_code}")
    if response.status_code >= 400:
        raise PaymentRefused(f"the payments service refused: {response.text[:200]}")
    answer = response.json()
    return {"payment_reference": str(answer.get("payment_reference", "")), "status": "paid"}


class ExpenseApproval(Workflow):
    """An expense claim is reviewed by finance, approved by a manager when large, then paid."""

    name = "expense-approval"
    version = 1
    tracks = "expense"
    calendar = "uk-london"  # finance works London office hours
    correlate_by = subject.reference  # payment systems quote the claim reference
    # A review decision comes from finance (never the submitter), whoever sends it: no
    # application may approve a claim through raiseEvent on finance's behalf.
    events = [Event("reviewed", raisers=who.role("finance") - submitter)]

    submitted = State(
        initial=True,
        label="Finance review",
        slots=[
            Slot(
                "finance_review",
                waits_for="reviewed",
                label="Review expense {subject.reference}: "
                "{subject.amount:,.2f} {subject.currency}",
                fields=[
                    Field.choice("decision", ["approve", "reject", "query"]),
                    Field.text("comment", required=False),
                ],
                # Separation of duties: anyone in finance except the person who submitted it.
                candidates=who.role("finance") - submitter,
                delegates=who.role("finance-lead"),
                milestones=[
                    milestone.assigned(within=business.hours(4)),
                    milestone.finished(within=business.days(2)),
                ],
                reminders=[
                    # A nudge to whoever holds it (or to the whole team while nobody does).
                    reminder.at(0.75, of="finished", notify=who.holder() | who.candidates()),
                    # Nobody picked it up in time: the finance lead may take it or hand it out.
                    reminder.on_breach("assigned", escalate_to=who.role("finance-lead")),
                    # The decision is late: tell the lead, and put it at the top of every inbox.
                    reminder.on_breach(
                        "finished", notify=who.role("finance-lead"), raise_priority_to=1
                    ),
                ],
            )
        ],
        then=[
            Route("rejected", when=payload.finance_review.decision == "reject"),
            Route("awaiting_answer", when=payload.finance_review.decision == "query"),
            Route("manager_approval", when=subject.amount > MANAGER_APPROVAL_ABOVE),
            Route("paying", when=paid_by_api),
            Route("payment"),
        ],
        moves=[
            # The employee may withdraw a claim they no longer want paid.
            Move("withdraw", to="withdrawn", by=submitter),
        ],
    )

    awaiting_answer = State(
        label="Question to the employee",
        slots=[
            Slot(
                "answer",
                waits_for="answered",
                label="Finance asks about {subject.reference}: {payload.finance_review.comment}",
                fields=[Field.text("answer"), Field.file("receipt", required=False)],
                candidates=submitter,
                milestones=[milestone.finished(within=business.days(5))],
                reminders=[reminder.at(0.5, of="finished", notify=who.holder() | submitter)],
            )
        ],
        then=[Route("submitted")],  # back to finance, who review it afresh
        timeouts=[timeout(real.days(14), notify=submitter, move_to="withdrawn")],
    )

    manager_approval = State(
        label="Manager approval",
        slots=[
            Slot(
                "manager_approval",
                waits_for="approved",
                label="Approve {subject.reference} by {subject.submitted_by}: "
                "{subject.amount:,.2f} {subject.currency}",
                fields=[
                    Field.choice("decision", ["approve", "reject"]),
                    Field.text("comment", required=False),
                ],
                # An attribute rule: a principal whose "reports" attribute lists the submitter
                # is the submitter's manager (the directory sync fills that attribute).
                candidates=(who.attr("reports") == subject.submitted_by) - submitter,
                delegates=who.role("finance-lead"),
                milestones=[milestone.finished(within=business.days(3))],
                reminders=[
                    # To whoever holds it, or while nobody does, to the submitter's manager(s).
                    reminder.at(
                        0.5,
                        of="finished",
                        every=business.days(1),
                        notify=who.holder() | who.candidates(),
                    ),
                    reminder.on_breach("finished", escalate_to=who.role("finance-lead")),
                ],
            )
        ],
        then=[
            Route("rejected", when=payload.manager_approval.decision == "reject"),
            Route("paying", when=paid_by_api),
            Route("payment"),
        ],
        moves=[Move("withdraw", to="withdrawn", by=submitter)],
    )

    paying = State(
        label="Payment by the payments service",
        action=post_payment,
        retry=Exponential(
            first=timedelta(seconds=30),
            factor=2,
            max_wait=timedelta(minutes=30),
            max_attempts=6,
            jitter=0.2,
            timeout=timedelta(seconds=20),
            final=[PaymentRefused],
        ),
        on_success=[Route("paid")],
        # Refused, or still down after the last attempt: accounts payable pays it by hand.
        on_error=[OnError("payment")],
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
            )
        ],
        then=[Route("paid")],
        moves=[
            # Finance may stop a payment, but only while it has not been made.
            Move(
                "stop_payment",
                to="rejected",
                by=who.role("finance-lead"),
                preconditions=[
                    Precondition("not paid yet", payload.payment.payment_reference.is_missing()),
                ],
                fields=[Field.text("reason")],
            )
        ],
    )

    paid = State(terminal=True, label="Paid")
    rejected = State(terminal=True, label="Rejected")
    withdrawn = State(terminal=True, label="Withdrawn")
