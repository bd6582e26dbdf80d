"""Carrying out what a decision did to deadlines, in the decision's own transaction.

After the engine has decided (clock ledgers on the slots it touched), this
writes the ledgers, each slot's nearest due instant, the timeline lines for
clock changes, and makes the timer rows of those slots (and of the run's
state) match what the core says they should be. A timer is therefore armed,
moved or cancelled in the same transaction as the change that caused it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from taskflow.core import calendars, clocks, deadlines
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.service.container import Services
from taskflow.store import db
from taskflow.store import deadlines as store
from taskflow.store import runs as rows


@dataclass(frozen=True)
class Context:
    """What carrying out needs beside the outcome: the definition, calendars, slots as loaded."""

    definition: Definition
    registry: calendars.Registry
    before: Mapping[str, SlotView] = field(default_factory=dict)
    actor: str | None = None


def context(
    definition: Definition,
    registry: calendars.Registry,
    before: Sequence[SlotView] = (),
    actor: str | None = None,
) -> Context:
    """A :class:`Context` for slots loaded as ``before``."""
    return Context(definition, registry, {s.id: s for s in before}, actor)


async def load_slots(conn: db.Connection, run_id: str) -> list[SlotView]:
    """A run's slots with their clock ledgers (what the engine decides on)."""
    return await store.with_clocks(conn, await rows.slots_of_run(conn, run_id))


async def carry_out(
    conn: db.Connection,
    run: RunView,
    slots: Sequence[SlotView],
    ctx: Context,
    now: datetime,
    *,
    run_changed: bool,
    audit_lines: bool = True,
) -> None:
    """Write clocks, due instants, clock timeline lines and timers for ``slots`` (and the run)."""
    registry = ctx.registry
    clock_rows, due_rows, audit = [], [], []
    for view in slots:
        if audit_lines:
            audit += deadlines.clock_audit(ctx.before.get(view.id), view, registry, now, ctx.actor)
        for c in view.clocks:
            cal = clocks.calendar_of(registry, c)
            clock_rows.append(store.ClockRow(view.id, view.run_id, c, clocks.due_at(c, cal), None))
        due_rows.append((view.id, view.visit, deadlines.nearest_due(view, registry)))
    await store.save_clocks(conn, clock_rows, now)
    await store.set_slot_due(conn, due_rows)
    if audit:
        await rows.append_audit(conn, run.id, audit)
    await sync_timers(conn, run, slots, ctx, now, run_changed=run_changed)


async def sync_timers(
    conn: db.Connection,
    run: RunView,
    slots: Sequence[SlotView],
    ctx: Context,
    now: datetime,
    *,
    run_changed: bool,
) -> None:
    """Arm, move or cancel the timer rows of ``slots`` (and of the run's state when it changed)."""
    if slots:
        existing = await store.timers_of(conn, slot_ids=[s.id for s in slots])
        fired = {t.key: t.fired for t in existing}
        wanted = [
            spec
            for view in slots
            for spec in deadlines.slot_timers(ctx.definition, view, ctx.registry, fired)
        ]
        await store.reconcile(conn, existing, wanted, now)
    if run_changed:
        existing = await store.timers_of(conn, run_id=run.id)
        fired = {t.key: t.fired for t in existing}
        await store.reconcile(
            conn, existing, deadlines.state_timers(ctx.definition, run, ctx.registry, fired), now
        )


async def after_outcome(conn: db.Connection, result: Outcome, ctx: Context, now: datetime) -> None:
    """:func:`carry_out` for an engine outcome."""
    await carry_out(
        conn,
        result.run,
        [*result.created, *result.changed],
        ctx,
        now,
        run_changed=result.run_changed,
        audit_lines=False,
    )


def timeline(result: Outcome, ctx: Context, now: datetime) -> list[AuditEntry]:
    """The outcome's timeline with each slot's clock lines right after that slot's last line."""
    extra = {
        view.id: deadlines.clock_audit(ctx.before.get(view.id), view, ctx.registry, now, ctx.actor)
        for view in [*result.created, *result.changed]
    }
    last = {e.slot_id: i for i, e in enumerate(result.audit) if e.slot_id in extra}
    merged: list[AuditEntry] = []
    for i, entry in enumerate(result.audit):
        merged.append(entry)
        if entry.slot_id is not None and last.get(entry.slot_id) == i:
            merged += extra.pop(entry.slot_id)
    for lines in extra.values():
        merged += lines
    return merged


async def after_slot_move(
    services: Services, conn: db.Connection, slot: SlotView, now: datetime, actor: str | None
) -> None:
    """Clocks and timers after a claim, release or assignment written outside the engine."""
    run = await rows.get_run(conn, slot.run_id)
    if run is None:
        return
    definition = services.catalog.get(run.view.workflow, run.view.definition_version)
    [before] = await store.with_clocks(conn, [slot])
    after = deadlines.sync_clocks(definition, before, run.view.subject, now)
    ctx = context(definition, services.calendars, [before], actor)
    await carry_out(conn, run.view, [after], ctx, now, run_changed=False)


# -- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClockReading:
    """A clock as a screen shows it at ``now``: the ledger and what follows from it."""

    clock: clocks.Clock
    calendar: str
    budget: timedelta
    elapsed: timedelta
    remaining: timedelta
    due_at: datetime | None
    status: str
    met_at: datetime | None
    breached_at: datetime | None
    explain: list[str]


def read(
    registry: calendars.Registry,
    clock: clocks.Clock,
    now: datetime,
    at_risk: float = clocks.DEFAULT_AT_RISK,
) -> ClockReading:
    """Everything derived from one ledger at ``now`` (at risk past ``at_risk`` of the budget)."""
    cal = clocks.calendar_of(registry, clock)
    return ClockReading(
        clock=clock,
        calendar=clock.calendar or "real time",
        budget=clocks.budget_time(clock, cal),
        elapsed=clocks.elapsed(clock, cal, now),
        remaining=clocks.remaining(clock, cal, now),
        due_at=clocks.due_at(clock, cal),
        status=clocks.status(clock, cal, now, at_risk),
        met_at=clock.met_at,
        breached_at=clocks.breached_at(clock, cal, now),
        explain=clocks.explain(clock, cal),
    )


async def readings(services: Services, slot_ids: Sequence[str]) -> dict[str, list[ClockReading]]:
    """The clocks of these slots as of the services' clock (the caller checked visibility)."""
    now = services.clock.now()
    async with services.db.connection() as conn:
        found = await store.clocks_of(conn, slot_ids)
    return {
        slot_id: [
            read(services.calendars, c, now, services.settings.sla_at_risk)
            for c in found.get(slot_id, ())
        ]
        for slot_id in slot_ids
    }
