"""A workflow for the needs-attention tests: a route list that may match nothing, a
real-time SLA, and an early event kept for two hours."""

from __future__ import annotations

from taskflow import (
    Buffer,
    Event,
    Field,
    Move,
    Route,
    Slot,
    State,
    Workflow,
    milestone,
    real,
    subject,
    timeout,
    who,
)


class Triage(Workflow):
    """Finance checks a case within two hours; its size picks the next state (a case without
    a size matches no route); evidence may arrive before it is awaited."""

    name = "triage"
    tracks = "case"
    calendar = "uk-london"
    events = [Event("evidence", buffer=Buffer(max=2, for_=real.hours(2)))]

    intake = State(
        initial=True,
        slots=[
            Slot(
                "check",
                candidates=who.role("finance"),
                delegates=who.role("lead"),
                milestones=[milestone.finished(within=real.hours(2))],
            )
        ],
        then=[Route("big", when=subject.size > 10), Route("small", when=subject.size <= 10)],
        # A lead may close a case by hand (the definition needs a way out besides routes).
        moves=[Move("close", to="small", by=who.role("lead"))],
        # A case nobody routes is taken as big after three days (the worker moves it).
        timeouts=[timeout(real.days(3), move_to="big")],
    )
    big = State(
        slots=[Slot("file", waits_for="evidence", fields=[Field.text("code")])],
        then=[Route("done")],
    )
    small = State(terminal=True)
    done = State(terminal=True)
