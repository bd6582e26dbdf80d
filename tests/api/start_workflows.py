"""Workflows of the start and actor tests: routes and hooks that read who acted.

``four-eyes`` routes on ``actor`` (the approver is not the requester); its enter hook reads
``ctx.actor`` (login and roles) and sends an approval by finance on to ``audited``.
``auto-close`` waits for a timeout whose route reads ``actor.kind`` (``timer``).
"""

from __future__ import annotations

from taskflow import (
    HookContext,
    Route,
    Slot,
    State,
    Workflow,
    actor,
    real,
    subject,
    timeout,
    who,
)


def audit_finance(ctx: HookContext) -> str | None:
    """An approval made by someone of finance is audited (the hook reads ``ctx.actor``)."""
    if ctx.actor.login is not None and "finance" in ctx.actor.roles:
        return "audited"
    return None


class FourEyes(Workflow):
    """A request approved by anyone but its requester; a self-approval is flagged."""

    name = "four-eyes"
    tracks = "request"

    review = State(
        initial=True,
        slots=[Slot("approve", waits_for="approved", candidates=who.anyone())],
        then=[
            Route("self_approved", when=actor.login == subject.requested_by),
            Route("approved"),
        ],
    )
    approved = State(on_enter=audit_finance, redirects=["audited"], terminal=True)
    audited = State(terminal=True)
    self_approved = State(terminal=True)


class AutoClose(Workflow):
    """A reminder that closes itself: the timeout's route reads who moved it (the timer)."""

    name = "auto-close"
    tracks = "nudge"

    waiting = State(
        initial=True,
        slots=[Slot("answer", waits_for="answered", candidates=who.anyone())],
        then=[Route("answered")],
        timeouts=[timeout(real.hours(1), move_to="expired")],
    )
    expired = State(
        then=[Route("closed_by_timer", when=actor.kind == "timer"), Route("closed")],
    )
    answered = State(terminal=True)
    closed_by_timer = State(terminal=True)
    closed = State(terminal=True)
