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
from taskflow.core.runs.model import ENDED, AuditEntry, Outcome, RunView, SlotView
from taskflow.service.container import Services
from taskflow.store import db, report_kept
from taskflow.store import deadlines as store
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


def ledgers(
    slots: Sequence[SlotView],
    registry: calendars.Registry,
    before: Mapping[str, SlotView] | None = None,
) -> tuple[list[store.ClockRow], list[tuple[str, int, datetime | None]]]:
    """The clock rows and (slot, visit, nearest due instant) rows to write for ``slots``;
    a ledger equal to the one in ``before`` (as loaded) is left out: its row holds it."""
    clock_rows, due_rows = [], []
    for view in slots:
        loaded = before.get(view.id) if before else None
        stored = loaded.clocks if loaded is not None else ()
        for c in view.clocks:
            if c in stored:
                continue
            cal = clocks.calendar_of(registry, c)
            clock_rows.append(store.ClockRow(view.id, view.run_id, c, clocks.due_at(c, cal), None))
        due_rows.append((view.id, view.visit, deadlines.nearest_due(view, registry)))
    return clock_rows, due_rows


async def carry_out(
    conn: db.Connection,
    run: RunView,
    slots: Sequence[SlotView],
    ctx: Context,
    now: datetime,
    *,
    run_changed: bool,
    lines: Sequence[AuditEntry] = (),
    clock_lines: bool = True,
    slot_timers: Sequence[store.TimerRow] | None = None,
) -> None:
    """Write clocks, due instants, timeline lines and timers for ``slots`` (and the run).

    One read (the timer rows, unless ``slot_timers`` already holds those of
    ``slots`` and the run did not change) and one write statement: ``lines``, then
    the clock lines (``clock_lines``), travel in it too.
    """
    registry = ctx.registry
    writes = store.DeadlineWrites(run_id=run.id, audit=list(lines))
    if clock_lines:
        for view in slots:
            writes.audit += deadlines.clock_audit(
                ctx.before.get(view.id), view, registry, now, ctx.actor
            )
    writes.clocks, writes.slot_due = ledgers(slots, registry, ctx.before)
    writes.pickups = pickups(slots, ctx)
    existing: list[store.TimerRow] = list(slot_timers or ())
    run_timers: list[store.TimerRow] = []
    if slot_timers is None or run_changed:
        read_slots = [s.id for s in slots] if slot_timers is None else []
        found, run_timers = await store.timers_for(
            conn, read_slots, run.id if run_changed else None
        )
        existing += found
    wanted = [
        spec
        for view in slots
        for spec in deadlines.slot_timers(ctx.definition, view, registry, _fired(existing))
    ]
    if run_changed:
        wanted += deadlines.state_timers(ctx.definition, run, registry, _fired(run_timers))
        existing += run_timers
    writes.timers = store.TimerChanges.between(existing, wanted)
    await writes.send(conn, now)
    # After the write: the measures read this very change's claim and release lines.
    await save_measures(conn, [(v, ctx) for v in slots])


def _fired(timers: Sequence[store.TimerRow]) -> dict[str, int]:
    return {t.key: t.fired for t in timers}


def _measured_on(
    view: SlotView, ctx: Context
) -> tuple[clocks.Clock | None, calendars.BusinessClock] | None:
    """The clock a report measures ``view`` on and its calendar (the clock's, else the
    workflow's; real time for neither); None when that calendar is not loaded (the report
    then measures the slot on read, and finds no business time either)."""
    clock = slot_measures.report_clock(view.clocks)
    name = clock.budget.calendar if clock is not None else None
    name = name or ctx.definition.calendar
    if name is not None and name not in ctx.registry.names():
        return None
    return clock, calendars.REAL_TIME if name is None else ctx.registry.get(name)


def pickups(slots: Sequence[SlotView], ctx: Context) -> list[report_kept.PickupRow]:
    """Time to pickup of the live ``slots`` that were picked up, to store beside them (the
    write skips rows that hold these numbers already: it is final from the first pickup)."""
    found = []
    for view in slots:
        if view.status in ENDED or view.picked_at is None or view.opened_at is None:
            continue
        measured = _measured_on(view, ctx)
        if measured is None:
            continue
        clock, cal = measured
        business, real = slot_measures.pickup(
            opened_at=view.opened_at,
            picked_at=view.picked_at,
            clock=clock,
            calendar=cal,
            end=view.picked_at,
        )
        assert business is not None
        assert real is not None
        found.append(
            report_kept.PickupRow(view.id, clock.milestone if clock else "", business, real)
        )
    return found


async def save_measures(conn: db.Connection, slots: Sequence[tuple[SlotView, Context]]) -> None:
    """Store the report measures of those ``slots`` that just ended (each with its context),
    after their clocks and timeline lines were written.

    One read of their timelines' moves and one write, only when a slot ends;
    the report then aggregates stored numbers for them (``store/slot_measures.py``).
    """
    ended = [(v, ctx) for v, ctx in slots if v.status in ENDED and v.opened_at is not None]
    if not ended:
        return
    moves = await measures_store.moves_of(
        conn, [v.run_id for v, _ in ended], [v.id for v, _ in ended]
    )
    found = {}
    for view, ctx in ended:
        measured = _measured_on(view, ctx)
        if measured is None:
            continue
        clock, cal = measured
        assert view.opened_at is not None
        found[view.id] = slot_measures.measure(
            opened_at=view.opened_at,
            claimed_at=view.claimed_at,
            satisfied_at=view.satisfied_at,
            ended_at=view.satisfied_at or view.cancelled_at or view.opened_at,
            clock=clock,
            calendar=cal,
            moves=moves[view.id],
        )
    await measures_store.save(conn, found)


async def after_outcome(
    conn: db.Connection,
    result: Outcome,
    ctx: Context,
    now: datetime,
    lines: Sequence[AuditEntry] = (),
) -> None:
    """:func:`carry_out` for an engine outcome (``lines``: its timeline, clock lines merged)."""
    await carry_out(
        conn,
        result.run,
        [*result.created, *result.changed],
        ctx,
        now,
        run_changed=result.run_changed,
        lines=lines,
        clock_lines=False,
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
    services: Services,
    conn: db.Connection,
    moved: store.SlotContext,
    now: datetime,
    actor: str | None,
    lines: Sequence[AuditEntry] = (),
) -> None:
    """Clocks, timers and ``lines`` after a claim, release or assignment written outside the
    engine: the statement that moved the slot read what this needs, so this is one write."""
    run = moved.run.view
    definition = services.catalog.get(run.workflow, run.definition_version)
    after = deadlines.sync_clocks(definition, moved.slot, run.subject, now)
    ctx = context(definition, services.calendars, [moved.slot], actor)
    await carry_out(
        conn, run, [after], ctx, now, run_changed=False, lines=lines, slot_timers=moved.timers
    )


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
