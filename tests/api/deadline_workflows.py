"""Workflows of the run deadline tests: a contract review due on the subject's date (end of
that business day in London), moved to ``overdue`` on breach; an order due four real hours
after it starts, cancelled on breach; a claim due at a date-time read in Berlin time that
raises ``late`` on itself when missed."""

from __future__ import annotations

from taskflow import (
    Deadline,
    Field,
    Route,
    Slot,
    State,
    Workflow,
    any_satisfied,
    payload,
    real,
    subject,
    who,
)


class ContractReview(Workflow):
    """Finance reviews a contract by its due date; a missed one goes to the lead."""

    name = "contract-review"
    tracks = "contract"
    calendar = "uk-london"
    deadline = Deadline(
        at=subject.due_date,
        calendar="uk-london",
        notify_at_risk=who.role("finance"),
        notify=who.role("finance-lead"),
        move_to="overdue",
    )

    review = State(
        initial=True,
        slots=[
            Slot(
                "review",
                fields=[Field.text("note", required=False)],
                candidates=who.role("finance"),
            )
        ],
        then=[Route("done")],
    )
    overdue = State(
        slots=[Slot("chase", candidates=who.role("finance-lead"))],
        then=[Route("done")],
    )
    done = State(terminal=True)


class Order(Workflow):
    """An order is packed within four real hours of its start, or cancelled."""

    name = "order"
    tracks = "order"
    deadline = Deadline(after=real.hours(4), cancel=True)

    packing = State(
        initial=True,
        slots=[Slot("pack", candidates=who.role("finance"))],
        then=[Route("shipped")],
    )
    shipped = State(terminal=True)


class Claim(Workflow):
    """A claim decided by a Berlin date-time; a missed one raises ``late`` on itself."""

    name = "claim"
    tracks = "claim"
    deadline = Deadline(at=subject.decide_by, zone="Europe/Berlin", raise_event="late")

    deciding = State(
        initial=True,
        slots=[
            Slot("decide", candidates=who.role("finance")),
            Slot("lateness", waits_for="late", candidates=who.role("finance-lead")),
        ],
        done=any_satisfied,
        then=[Route("late", when=payload.lateness.is_set()), Route("decided")],
    )
    late = State(terminal=True)
    decided = State(terminal=True)
