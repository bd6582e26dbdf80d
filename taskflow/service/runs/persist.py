"""Carrying out a decision in the caller's transaction: load what the planner needs, plan, write.

The planner is ``core/common/unit_of_work.plan`` and the writer ``store/common/unit_of_work.write``
(docs/architecture.md, "The unit of work"); this module is the glue a use case calls:
:func:`outcome` for an engine outcome, :func:`deadlines` for slots whose rows are as
stored (a slot moved by a statement, a run moved to another version).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.service.clocks import deadlines as clock_service
from taskflow.service.runs import buffered
from taskflow.service.workspaces import limits as workspace_limits
from taskflow.store.clocks import deadlines as deadline_rows
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer
from taskflow.store.runs import timeline


async def outcome(
    conn: db.Connection,
    result: Outcome,
    *,
    now: datetime,
    sla: uow.Context,
) -> None:
    """Persist what the engine decided for an existing run: its rows, clocks, due instants,
    timers and timeline in one unit of work; then events the run kept for a slot that just
    opened are delivered to it (see :mod:`taskflow.service.runs.buffered`)."""
    await write(conn, result, now=now, sla=sla)
    if buffered.needs_delivery(sla.definition, result):
        await buffered.deliver(conn, sla, result.run.id, now, write)


async def write(conn: db.Connection, result: Outcome, *, now: datetime, sla: uow.Context) -> None:
    """:func:`outcome` without delivering buffered events."""
    result = await clock_service.opened_on_team(conn, sla, result, now)
    touched = [*result.created, *result.changed]
    timers = await _timers(conn, touched, result.run.id if result.run_changed else None)
    await writer.write(conn, uow.plan(result, sla, timers, now), now)
    await workspace_limits.admit_opened(conn, result.run.id, result.created)


async def deadlines(
    conn: db.Connection,
    run: RunView,
    slots: Sequence[SlotView],
    ctx: uow.Context,
    now: datetime,
    *,
    run_changed: bool = False,
) -> None:
    """Carry out the deadlines of ``slots`` whose rows are already written (and of the run's
    state when ``run_changed``): clocks, due instants, timers, clock lines."""
    result = Outcome(run, (), tuple(slots), (), run_changed)
    timers = await _timers(conn, slots, run.id if run_changed else None)
    await writer.write(conn, uow.plan(result, ctx, timers, now, rows=False), now)


async def _timers(
    conn: db.Connection, slots: Sequence[SlotView], run_id: str | None
) -> list[TimerRow]:
    if not slots and run_id is None:
        return []
    found, of_run = await deadline_rows.timers_for(conn, [s.id for s in slots], run_id)
    return [*found, *of_run]


async def audit(conn: db.Connection, run_id: str, *entries: AuditEntry) -> None:
    await timeline.append_audit(conn, run_id, entries)
