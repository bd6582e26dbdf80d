"""The unit of work: everything one decision writes, as ONE value, planned by ONE pure function.

A use case (claim, complete, an event, a migration...) and a worker's batch of timer
firings decide the same way: the engine (or a claim, or a firing) says how the run and
its slots now are. :func:`plan` turns that outcome, the rows as they were loaded and
``now`` into a :class:`Writes`: the run and slot rows, the clock ledgers, each slot's
nearest due instant, its time to pickup, the timeline lines (a slot's clock lines right
after its last line), the timer rows as they must now be (armed, moved, cancelled), and
the slots that ended (measured for reports once the lines are written).

The one writer is ``taskflow/store/common/unit_of_work.py`` (``write(conn, writes, now)``);
the service glue loading what :func:`plan` needs is ``taskflow/service/runs/persist.py``. A
worker batch merges its firings' :class:`Writes` (``writes.py``: :meth:`Writes.merge`, later wins)
and writes them once. Entry points: :func:`context`, :func:`plan`, :meth:`Writes.merge`,
then the store's ``write``. docs/architecture.md, "The unit of work".

Pure: no I/O, no clock; ids of new rows are chosen by the database.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from taskflow.core.clocks import calendars, clock_lines, clocks, deadlines, expiry, run_deadline
from taskflow.core.clocks.timer_states import PARKED, TimerRow, TimerSpec, TimerStatus
from taskflow.core.common.writes import ClockWrite, Ended, Pickup

# What a plan is and how a batch merges, under the names callers use.
from taskflow.core.common.writes import Writes as Writes
from taskflow.core.common.writes import merged as merged
from taskflow.core.compose import compose
from taskflow.core.definition.workflow import Definition
from taskflow.core.reports import slot_measures
from taskflow.core.runs.model import ENDED, AuditEntry, Outcome, SlotView
from taskflow.core.steps import step_timers

ARMED = TimerStatus.ARMED


@dataclass(frozen=True)
class Context:
    """What planning needs beside the outcome: the definition, calendars, slots as loaded."""

    definition: Definition
    registry: calendars.Registry
    before: Mapping[str, SlotView] = field(default_factory=dict)
    actor: str | None = None
    #: The share of a budget past which a running clock is at risk (its ``at_risk`` timer).
    at_risk: float = clocks.DEFAULT_AT_RISK


def context(
    definition: Definition,
    registry: calendars.Registry,
    before: Sequence[SlotView] = (),
    actor: str | None = None,
    at_risk: float = clocks.DEFAULT_AT_RISK,
) -> Context:
    """A :class:`Context` for slots loaded as ``before`` (``at_risk``: the setting
    ``TASKFLOW_SLA_AT_RISK``, where the ``at_risk`` timers are due)."""
    return Context(definition, registry, {s.id: s for s in before}, actor, at_risk)


# -- the planner ---------------------------------------------------------------------------------


def plan(
    result: Outcome,
    ctx: Context,
    timers: Sequence[TimerRow],
    now: datetime,
    *,
    rows: bool = True,
) -> Writes:
    """What carrying out ``result`` writes (THE planner: use cases and the worker call it).

    ``timers`` are the loaded timer rows of the touched slots (``created`` and
    ``changed``) and, when the run changed, the run's own (state) timers. With
    ``rows=False`` the run and slot rows are not written (they are as stored), only what
    follows from them: clocks, due instants, timers, lines.
    """
    touched = [*result.created, *result.changed]
    lines = timeline(result, ctx, now) if touched else result.audit  # no clock lines to add
    clock_rows, due_rows = ledgers(touched, ctx.registry, ctx.before)
    timer_rows = _timers(result, touched, ctx, timers)
    due_steps = step_timers.due_steps(ctx.definition, result.run) if result.run_changed else []
    kids = compose.due_children(ctx.definition, result.run) if result.run_changed else []
    return Writes(
        runs=((result.run, 1),) if rows and result.run_changed else (),
        created=tuple((result.run.workflow, v) for v in result.created) if rows else (),
        changed=result.changed if rows else (),
        clocks=tuple(clock_rows),
        due=tuple(due_rows),
        pickups=tuple(pickups(touched, ctx)),
        lines=tuple((result.run.id, line) for line in lines),
        timers=tuple(timer_rows),
        notify=bool(due_steps or kids) or any(t.status == ARMED for t in timer_rows),
        ended=tuple(ended(touched, ctx)),
        steps=tuple(due_steps),
        once=tuple((result.run.id, name, value) for name, value in result.once),
        children=tuple(kids),
    )


def ledgers(
    slots: Sequence[SlotView],
    registry: calendars.Registry,
    before: Mapping[str, SlotView] | None = None,
) -> tuple[list[ClockWrite], list[tuple[str, int, datetime | None]]]:
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
            # The breach on record is the ledger's history (a recompute may have ended a term
            # whose deadline passed); a running term's breach is recorded when it fires.
            breach = clocks.recorded_breach(c, cal, registry)
            clock_rows.append(ClockWrite(view.id, view.run_id, c, clocks.due_at(c, cal), breach))
        due_rows.append((view.id, view.visit, deadlines.nearest_due(view, registry)))
    return clock_rows, due_rows


def timeline(result: Outcome, ctx: Context, now: datetime) -> list[AuditEntry]:
    """The outcome's timeline with each slot's clock lines right after that slot's last line."""
    extra = {
        view.id: clock_lines.clock_audit(
            ctx.before.get(view.id), view, ctx.registry, now, ctx.actor
        )
        for view in [*result.created, *result.changed]
    }
    last = {e.slot_id: i for i, e in enumerate(result.audit) if e.slot_id in extra}
    lines: list[AuditEntry] = []
    for i, entry in enumerate(result.audit):
        lines.append(entry)
        if entry.slot_id is not None and last.get(entry.slot_id) == i:
            lines += extra.pop(entry.slot_id)
    for rest in extra.values():
        lines += rest
    return lines


def differences(
    existing: Sequence[TimerRow], wanted: Sequence[TimerSpec]
) -> tuple[list[TimerRow], list[TimerSpec]]:
    """(armed rows to cancel, specs to arm or move) so that the rows match ``wanted``.

    A dead or discarded row is left alone (only an admin's retry re-arms it), and an
    armed row whose failed firing was pushed back keeps its backoff while its planned
    due instant is still the one wanted.
    """
    by_key = {t.key: t for t in existing}
    want = {s.key for s in wanted}
    cancel = [t for t in existing if t.status == ARMED and t.key not in want]
    arm = [
        s
        for s in wanted
        if s.key not in by_key
        or (
            by_key[s.key].status not in PARKED
            and (by_key[s.key].status != ARMED or by_key[s.key].planned != s.due_at)
        )
    ]
    return cancel, arm


def _timers(
    result: Outcome, touched: Sequence[SlotView], ctx: Context, timers: Sequence[TimerRow]
) -> list[TimerRow]:
    """The timer rows to write: the touched slots' (and the run's when it changed) made to
    match what the core wants, as whole rows."""
    ids = {s.id for s in touched}
    existing = [t for t in timers if t.slot_id in ids or (t.slot_id is None and result.run_changed)]
    fired = {t.key: t.fired for t in existing}
    wanted = [
        spec
        for view in touched
        for spec in deadlines.slot_timers(ctx.definition, view, ctx.registry, fired, ctx.at_risk)
    ]
    wanted += [
        spec
        for view in touched
        for spec in expiry.slot_timers(
            ctx.definition, view, result.run.subject, ctx.registry, fired
        )
    ]
    if result.run_changed:
        wanted += deadlines.state_timers(ctx.definition, result.run, ctx.registry, fired)
        wanted += run_deadline.run_timers(
            ctx.definition, result.run, ctx.registry, fired, ctx.at_risk
        )
    cancel, arm = differences(existing, wanted)
    by_key = {t.key: t for t in existing}
    written = [dataclasses.replace(t, status=TimerStatus.CANCELLED) for t in cancel]
    for spec in arm:
        old = by_key.get(spec.key) or TimerRow(
            spec.key,
            spec.run_id,
            spec.slot_id,
            spec.kind,
            spec.ref,
            spec.due_at,
            id=0,
            status=ARMED,
            fired=0,
        )
        written.append(
            dataclasses.replace(old, due_at=spec.due_at, status=ARMED, attempts=0, planned_at=None)
        )
    return written


def measured_on(
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


def pickups(slots: Sequence[SlotView], ctx: Context) -> list[Pickup]:
    """Time to pickup of the live ``slots`` that were picked up, to store beside them (the
    write skips rows that hold these numbers already: it is final from the first pickup)."""
    found = []
    for view in slots:
        if view.status in ENDED or view.picked_at is None or view.opened_at is None:
            continue
        measured = measured_on(view, ctx)
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
        found.append(Pickup(view.id, clock.milestone if clock else "", business, real))
    return found


def ended(slots: Sequence[SlotView], ctx: Context) -> list[Ended]:
    """The ``slots`` that ended and can be measured (the writer measures them after the
    lines are written: the measures read this very change's claim and release lines)."""
    found = []
    for view in slots:
        if view.status not in ENDED or view.opened_at is None:
            continue
        measured = measured_on(view, ctx)
        if measured is not None:
            found.append(Ended(view, *measured))
    return found
