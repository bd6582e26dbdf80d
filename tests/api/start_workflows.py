"""Workflows of the start and actor tests: routes and hooks that read who acted.

``four-eyes`` routes on ``actor`` (the approver is not the requester); its enter hook reads
``ctx.actor`` (login and roles) and sends an approval by finance on to ``audited``.
``auto-close`` waits for a timeout whose route reads ``actor.kind`` (``timer``).
``screened`` starts in an automatic step (the worker runs it) before its first slot: what an
awaited start (``waitFor``) waits for; the step's action and route read the step's actor.
"""

from __future__ import annotations

from typing import Any

from taskflow import (
    HookContext,
    Route,
    Slot,
    State,
    Workflow,
    actor,
    real,
    result,
    steps,
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


async def screen(ctx: steps.StepContext) -> dict[str, Any]:
    """The automatic screening: it passes, naming who acts (``automation:<step id>``)."""
    return {"passed": True, "by": ctx.actor.name, "kind": ctx.actor.kind}


class Screened(Workflow):
    """An applicant is screened by the worker, then interviewed (the first human slot)."""

    name = "screened"
    tracks = "applicant"

    screening = State(
        initial=True,
        action="tests.api.start_workflows:screen",
        on_success=[
            Route("interview", when=(actor.kind == "automation") & result.screening.passed),
            Route("rejected"),
        ],
    )
    interview = State(
        slots=[Slot("interview", waits_for="interviewed", candidates=who.anyone())],
        then=[Route("hired")],
    )
    hired = State(terminal=True)
    rejected = State(terminal=True)
