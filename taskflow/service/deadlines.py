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

from taskflow.core import calendars, clocks, deadlines, slot_measures
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.service.container import Services
from taskflow.store import db
from taskflow.store import deadlines as store
from taskflow.store import notifications as outbox
from taskflow.store import runs as rows
from taskflow.store import slot_measures as measures_store


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
    await save_measures(conn, [v for v in slots if v.status in ENDED], ctx)
    if audit:
        await rows.append_audit(conn, run.id, audit)
    await sync_timers(conn, run, slots, ctx, now, run_changed=run_changed)


#: A slot in these states is over: its report measures are taken once and stored.
ENDED = ("satisfied", "cancelled")


async def save_measures(conn: db.Connection, ended: Sequence[SlotView], ctx: Context) -> None:
    """Store the report measures of slots that just ended (after their clocks were saved).

    One read of their timelines' moves and one write, only when a slot ends;
    the report then aggregates stored numbers for them (``store/slot_measures.py``).
    """
    ended = [v for v in ended if v.opened_at is not None]
    if not ended:
        return
    moves = await measures_store.moves_of(conn, [v.run_id for v in ended], [v.id for v in ended])
    found = {}
    for view in ended:
        clock = slot_measures.report_clock(view.clocks)
        name = clock.budget.calendar if clock is not None else None
        name = name or ctx.definition.calendar
        if name is not None and name not in ctx.registry.names():
            continue  # the report measures it on read (and finds no business time either)
        assert view.opened_at is not None
        found[view.id] = slot_measures.measure(
            opened_at=view.opened_at,
            claimed_at=view.claimed_at,
            satisfied_at=view.satisfied_at,
            ended_at=view.satisfied_at or view.cancelled_at or view.opened_at,
            clock=clock,
            calendar=calendars.REAL_TIME if name is None else ctx.registry.get(name),
            moves=moves[view.id],
        )
    await measures_store.save(conn, found)


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


async def notifications(
    services: Services, recipient: str, *, after_id: int, limit: int
) -> tuple[list[outbox.NotificationRow], int]:
    """A recipient's notifications, oldest first (integrations read the table the same way)."""
    async with services.db.connection() as conn:
        return await outbox.notifications_for(conn, recipient, after_id=after_id, limit=limit)


async def notification(
    services: Services, recipient: str, notification_id: int
) -> outbox.NotificationRow | None:
    """One notification, if it is ``recipient``'s (anyone else's reads as absent)."""
    async with services.db.connection() as conn:
        found = await outbox.notification(conn, notification_id)
    return found if found is not None and found.recipient == recipient else None
