"""A delayed start (``startRun``'s ``startAt``): when it starts, and the run until then (pure).

A run started with ``startAt`` is written ``SCHEDULED``: its initial state not entered, no
slot, nothing but one timer row (``start``, planned by ``core/clocks/deadlines.state_timers``)
due at the start instant, which the run keeps in ``state_entered_at`` until it starts. The
worker fires that timer like any other (taken with the run's lock, ``SKIP LOCKED``, in one
transaction with the start): the run starts exactly once, and a worker dying before its
commit leaves the timer armed for the next one. Cancelling the run cancels the timer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow import errors
from taskflow.core.clocks import calendars, deadlines
from taskflow.core.definition import actors
from taskflow.core.definition import budgets as bu
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.decision import NewId
from taskflow.core.runs.model import AuditEntry, Outcome, RunView
from taskflow.core.runs.statuses import RunStatus

#: The furthest a start may be put off.
MAX_DELAY = timedelta(days=366)


@dataclass(frozen=True)
class Delay:
    """When a delayed start starts, as asked: an instant, or a duration from now."""

    at: datetime | None = None
    after: bu.Budget | None = None


def start_instant(
    definition: Definition,
    registry: calendars.Registry,
    now: datetime,
    *,
    at: datetime | None,
    after: bu.Budget | None,
) -> datetime:
    """When the run starts: the instant ``at``, or ``after`` (real or business time on its
    calendar, else the workflow's) from ``now``; exactly one of them. Refused (naming the
    field) when neither or both are given, the calendar is unknown or the start is more than
    :data:`MAX_DELAY` away."""
    if (at is None) == (after is None):
        raise errors.ValidationError(
            "startAt takes exactly one of instant or after.", field="startAt"
        )
    if at is not None:
        if at.tzinfo is None:
            raise errors.ValidationError(
                "startAt.instant needs a time zone (e.g. 2026-12-07T09:00:00Z).",
                field="startAt.instant",
            )
        when = at
    else:
        assert after is not None
        if after.amount <= 0:
            raise errors.ValidationError(
                "startAt.after.amount must be more than 0.", field="startAt.after.amount"
            )
        resolved = bu.resolve_budget(after, {}, definition.calendar)
        assert resolved is not None  # a plain budget always resolves
        if resolved.kind == "business" and resolved.calendar is None:
            raise errors.ValidationError(
                f"Workflow {definition.name!r} has no calendar: name one "
                "(startAt.after.calendar) for a business-time delay.",
                field="startAt.after.calendar",
            )
        if resolved.calendar is not None and resolved.calendar not in registry.names():
            known = ", ".join(sorted(registry.names()))
            raise errors.ValidationError(
                f"No calendar is called {resolved.calendar!r} (known: {known}).",
                field="startAt.after.calendar",
            )
        when = deadlines.after(registry, now, resolved)
    if when - now > MAX_DELAY:
        raise errors.ValidationError(
            f"startAt is more than {MAX_DELAY.days} days away; start it nearer the time.",
            field="startAt",
        )
    return when


def scheduled(
    definition: Definition,
    *,
    run_id: str,
    subject: Mapping[str, Any],
    start_at: datetime,
    now: datetime,
    actor: actors.Actor,
) -> Outcome:
    """A new run of ``definition`` waiting to start at ``start_at``: ``SCHEDULED``, in its
    initial state (not entered), its one line ``run.scheduled``."""
    run = RunView(
        id=run_id,
        workflow=definition.name,
        definition_version=definition.version,
        state=definition.initial_state.name,
        status=RunStatus.SCHEDULED,
        visit=0,
        subject=dict(subject),
        state_entered_at=start_at,
    )
    line = AuditEntry(
        "run.scheduled",
        now,
        actor.recorded,
        None,
        f"starts at {start_at.isoformat()}",
        {
            "workflow": definition.name,
            "version": definition.version,
            "start_at": start_at.isoformat(),
        },
    )
    return Outcome(run, (), (), (line,), run_changed=True)


def started(definition: Definition, run: RunView, *, now: datetime, new_id: NewId) -> Outcome:
    """The scheduled ``run`` starts now (its timer fired): as a start would make it, the
    timer acting (``ctx.actor`` reads ``timer``)."""
    if run.status != RunStatus.SCHEDULED:
        raise errors.ValidationError(f"The run is {run.status}, not scheduled.")
    return engine.start(
        definition,
        run_id=run.id,
        subject=run.subject,
        now=now,
        actor=actors.TIMER_ACTOR,
        new_id=new_id,
    )
