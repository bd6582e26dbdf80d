"""A workflow whose finished clock runs on its holder's calendar (the calendar chain)."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, business, milestone, reminder, who


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


class TeamChained(Workflow):
    """Finance approves within four business hours of the finance team's own calendar (else
    New York's)."""

    name = "team-chained"
    tracks = "request"
    calendar = "us-new-york"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "approve",
                candidates=who.role("finance"),
                milestones=[
                    milestone.finished(within=business.hours(4), chain=("team", "workflow"))
                ],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
