"""Workflows for the timer tests: breaches that reassign, and quiet-hours reminders."""

from __future__ import annotations

from typing import Any

from taskflow import (
    Route,
    Slot,
    State,
    Workflow,
    business,
    milestone,
    real,
    reminder,
    subject,
    who,
)


def _approval(**slot: Any) -> State:
    """Finance approves within two business hours; ``slot`` adds delegates and reminders."""
    return State(
        initial=True,
        slots=[
            Slot(
                "approve",
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=business.hours(2))],
                **slot,
            )
        ],
        then=[Route("done")],
    )


class Escalating(Workflow):
    """An approval whose breach reassigns it to the duty manager and makes it urgent."""

    name = "escalating"
    tracks = "request"
    calendar = "uk-london"

    waiting = _approval(
        delegates=who.role("lead"),
        reminders=[
            reminder.at(0.5, notify=who.holder(), quiet_hours=True),
            reminder.on_breach(
                reassign_to=who.id("leah"), raise_priority_to=1, notify=who.id("leah")
            ),
        ],
    )
    done = State(terminal=True)


class EscalatingToPool(Workflow):
    """An approval whose breach takes it from its holder and offers it to the leads."""

    name = "escalating-to-pool"
    tracks = "request"
    calendar = "uk-london"

    waiting = _approval(reminders=[reminder.on_breach(reassign_to=who.role("lead"))])
    done = State(terminal=True)


class EscalatingToOwner(Workflow):
    """An approval whose breach hands it to the request's owner (a principal id from the
    subject): an owner id longer than a holder can be makes that firing fail every time."""

    name = "escalating-to-owner"
    tracks = "request"
    calendar = "uk-london"

    waiting = _approval(reminders=[reminder.on_breach(reassign_to=who.id(subject.owner))])
    done = State(terminal=True)


class OutsiderAtNight(Workflow):
    """A signature asked of an outsider, reminded on real time: quiet hours follow the workflow."""

    name = "outsider-at-night"
    tracks = "contract"
    calendar = "uk-london"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "sign",
                candidates=who.email(subject.email, name=subject.name) | who.role("legal"),
                magic_link=True,
                milestones=[milestone.finished(within=real.days(3))],
                reminders=[
                    reminder.after(
                        real.hours(10),
                        notify=who.email(subject.email, name=subject.name) | who.role("legal"),
                        with_link=True,
                        quiet_hours=True,
                    )
                ],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
