"""The soak test's workflow: real-time budgets of seconds, so its timers fall due under load.

A job is worked by finance (``task``, waiting for ``done``), then checked
(``check``, waiting for ``checked``). Each slot has an ``assigned`` and a
``finished`` clock of a few real seconds with a reminder halfway, an
escalation to the leads when nobody picks it up and a raised priority when it
is late; the ``work`` state times out to ``review`` after a few seconds more.
Leads may move a job between the states (moves of the same name in several
states, for the stale-move guard).
"""

from __future__ import annotations

from taskflow import (
    Field,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    milestone,
    real,
    reminder,
    timeout,
    who,
)

finance = who.role("finance")
leads = who.role("lead")


def _slot(name: str, waits_for: str) -> Slot:
    return Slot(
        name,
        waits_for=waits_for,
        label=f"{name} {{subject.ref}}",
        fields=[Field.text("note", required=False)],
        candidates=finance,
        delegates=leads,
        milestones=[
            milestone.assigned(within=real.minutes(0.05)),  # 3 s
            milestone.finished(within=real.minutes(0.1)),  # 6 s
        ],
        reminders=[
            reminder.at(0.5, of="finished", notify=who.holder() | who.candidates()),
            reminder.on_breach("assigned", escalate_to=leads),
            reminder.on_breach("finished", notify=leads, raise_priority_to=1),
        ],
    )


class Soak(Workflow):
    """A job worked, then checked, on budgets of seconds."""

    name = "soak"
    tracks = "job"
    calendar = "uk-london"

    work = State(
        initial=True,
        slots=[_slot("task", "done")],
        then=[Route("review")],
        moves=[Move("skip", to="review", by=leads), Move("park", to="parked", by=leads)],
        timeouts=[timeout(real.minutes(0.15), move_to="review")],  # 9 s
    )
    review = State(
        slots=[_slot("check", "checked")],
        then=[Route("done")],
        moves=[Move("skip", to="done", by=leads), Move("park", to="parked", by=leads)],
    )
    parked = State(
        moves=[Move("resume", to="work", by=leads)],
        timeouts=[timeout(real.minutes(0.05), move_to="work")],  # 3 s
    )
    done = State(terminal=True)
