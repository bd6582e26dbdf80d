"""A workflow whose finished clock runs on its holder's calendar (the calendar chain)."""

from __future__ import annotations

from taskflow import (
    Route,
    Slot,
    State,
    Workflow,
    business,
    milestone,
    real,
    reminder,
    timeout,
    who,
)


class Chained(Workflow):
    """Finance approves within four business hours of whoever holds it (else New York's);
    at 90 % the slot goes to Frank."""

    name = "chained"
    tracks = "request"
    calendar = "us-new-york"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "approve",
                candidates=who.role("finance"),
                delegates=who.role("lead"),
                milestones=[
                    milestone.finished(within=business.hours(4), chain=("holder", "workflow"))
                ],
                reminders=[reminder.at(0.9, reassign_to=who.id("frank"))],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)


def team_approval() -> Slot:
    """Finance approves within four business hours of the team's own calendar (else the
    workflow's)."""
    return Slot(
        "approve",
        candidates=who.role("finance"),
        milestones=[milestone.finished(within=business.hours(4), chain=("team", "workflow"))],
    )


class TeamChained(Workflow):
    """Finance approves within four business hours of the finance team's own calendar (else
    New York's)."""

    name = "team-chained"
    tracks = "request"
    calendar = "us-new-york"

    waiting = State(
        initial=True,
        slots=[team_approval()],
        then=[Route("done")],
    )
    done = State(terminal=True)


class TeamLater(Workflow):
    """A request waits an hour (the worker's timeout moves it), then finance approves on the
    team's calendar: a slot the worker's batch opens."""

    name = "team-later"
    tracks = "request"
    calendar = "us-new-york"

    waiting = State(
        initial=True,
        slots=[Slot("hold", candidates=who.role("lead"))],
        then=[Route("approval")],
        timeouts=[timeout(real.hours(1), move_to="approval")],
    )
    approval = State(
        slots=[team_approval()],
        then=[Route("done")],
    )
    done = State(terminal=True)


class LeavePaused(Workflow):
    """Finance approves within four hours, the clock standing still while the holder is on
    leave."""

    name = "leave-paused"
    tracks = "request"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "approve",
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=real.hours(4), holder_leave="pause")],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
