"""The one writer of a decision: :func:`write` writes a ``core.unit_of_work.Writes``.

Whoever decided (a use case, a worker's batch of firings, an automatic step), the
planner in ``core/common/unit_of_work.py`` said what to write and this writes it, in the
caller's transaction, with one statement per table: the runs, the new slots, the
changed slots, then ONE statement of data-modifying CTEs for clocks, due instants,
timeline lines and timer rows (with the NOTIFY that wakes the workers), then the step
rows made due (a state with an action entered) and what ``steps.once`` recorded in
hooks, then the breaches a batch recorded
and the report measures of the slots that ended (these read
the lines just written). Statements: ``taskflow/store/common/unit_of_work.sql``. The caller
holds the locks (``locks.py``: runs, then live slots, then clocks and timers).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Sequence
from datetime import datetime

from taskflow.core.clocks import clocks
from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.common import durations
from taskflow.core.common.unit_of_work import Writes
from taskflow.core.reports import slot_measures
from taskflow.core.runs.model import SlotView
from taskflow.store.clocks import deadlines as deadlines_store
from taskflow.store.clocks.deadlines import CHANNEL
from taskflow.store.common import db, sql
from taskflow.store.compose import children as child_rows
from taskflow.store.reports import slot_measures as measures_store
from taskflow.store.runs import runs as rows
from taskflow.store.runs import timeline
from taskflow.store.steps import steps as step_rows

SQL = sql.statements("common/unit_of_work")


async def write(
    conn: db.Connection, writes: Writes, now: datetime, *, quiet: Collection[str] = ()
) -> None:
    """Write everything ``writes`` holds (THE writer: use cases and the worker call it).

    ``quiet``: runs the caller knows have no due step row of a state they leave (a worker's
    plain success: the state left had no timer, no recurring work and no slot, so its own
    step, the one finishing, was its only one); their step rows are not looked at."""
    if writes.runs:
        changed = writes.runs
        await conn.execute(
            SQL["update_runs"],
            [v.id for v, _ in changed],
            [v.state for v, _ in changed],
            [v.status for v, _ in changed],
            [v.visit for v, _ in changed],
            [v.state_entered_at for v, _ in changed],
            [v.ended_at for v, _ in changed],
            [n for _, n in changed],
            now,
            [v.unmatched_at for v, _ in changed],
            [json.dumps(dict(v.results)) for v, _ in changed],
        )
    by_workflow: dict[str, list[SlotView]] = {}
    for workflow, view in writes.created:
        by_workflow.setdefault(workflow, []).append(view)
    for workflow, created in by_workflow.items():
        await rows.insert_slots(conn, created, workflow, now)
    if writes.changed:
        await rows.update_slots(conn, writes.changed, now)
    await _deadlines(conn, writes, now)
    # Step rows made due with the decision that entered their state, and the due ones of
    # states left dropped (after the runs, slots, clocks and timers: the lock order).
    left = [(v.id, v.visit, str(v.status)) for v, _ in writes.runs if v.id not in quiet]
    await step_rows.cancel_left(conn, left, now)
    await child_rows.cancel_left(conn, left, now)  # awaited children of states left
    await step_rows.enqueue_many(conn, writes.steps)
    await step_rows.once_many(conn, writes.once, now)
    await child_rows.enqueue_many(conn, writes.children, now)
    if writes.breaches:
        await conn.execute(
            SQL["mark_breached"],
            [s for s, _, _ in writes.breaches],
            [m for _, m, _ in writes.breaches],
            [at for _, _, at in writes.breaches],
        )
    await _measure(conn, writes)


async def _deadlines(conn: db.Connection, writes: Writes, now: datetime) -> None:
    if not (writes.clocks or writes.due or writes.lines or writes.timers or writes.notify):
        return
    due_slots = {slot for slot, _, _ in writes.due}
    # The slot's copy of its report clock is written with its due instant.
    assert all(c.slot_id in due_slots for c in writes.clocks), "a clock without its due row"
    ks = writes.clocks
    pickups = {p.slot_id: p for p in writes.pickups}
    picked = [pickups.get(slot) for slot, _, _ in writes.due]
    lines = writes.lines
    await conn.execute(
        SQL["deadlines"],
        now,
        [uuid.UUID(c.slot_id) for c in ks],
        [uuid.UUID(c.run_id) for c in ks],
        [c.clock.milestone for c in ks],
        [c.clock.budget.kind for c in ks],
        [c.clock.budget.duration // durations.US for c in ks],
        [c.clock.budget.working_days for c in ks],
        [c.clock.budget.calendar for c in ks],
        [c.clock.started_at for c in ks],
        [json.dumps(_pause_list(c.clock)) for c in ks],
        [c.clock.met_at for c in ks],
        [c.due_at for c in ks],
        [c.breached_at for c in ks],
        [uuid.UUID(slot) for slot, _, _ in writes.due],
        [visit for _, visit, _ in writes.due],
        [due for _, _, due in writes.due],
        [p.clock if p else None for p in picked],
        [p.business_us if p else None for p in picked],
        [p.real_us if p else None for p in picked],
        *timeline.audit_arrays(lines),
        *_timer_arrays(writes.timers),
        writes.notify,
        CHANNEL,
        [json.dumps(deadlines_store.recompute_list(c.clock)) for c in ks],
    )


def _timer_arrays(timers: Sequence[TimerRow]) -> list[list[object]]:
    return [
        [t.key for t in timers],
        [uuid.UUID(t.run_id) for t in timers],
        [uuid.UUID(t.slot_id) if t.slot_id else None for t in timers],
        *db.columns(timers, "kind", "ref", "due_at"),
        [str(t.status) for t in timers],
        *db.columns(timers, "fired", "attempts", "last_error", "failed_at", "planned_at"),
    ]


def _pause_list(c: clocks.Clock) -> list[list[str | None]]:
    return [[p.start.isoformat(), p.end.isoformat() if p.end else None] for p in c.pauses]


async def _measure(conn: db.Connection, writes: Writes) -> None:
    """Store the report measures of the slots that ended, after their lines were written:
    one read of their timelines' moves and one write, only when a slot ended."""
    if not writes.ended:
        return
    moves = await measures_store.moves_of(
        conn, [e.slot.run_id for e in writes.ended], [e.slot.id for e in writes.ended]
    )
    found = {}
    for e in writes.ended:
        view = e.slot
        assert view.opened_at is not None
        found[view.id] = slot_measures.measure(
            opened_at=view.opened_at,
            claimed_at=view.claimed_at,
            satisfied_at=view.satisfied_at,
            ended_at=view.satisfied_at or view.cancelled_at or view.opened_at,
            clock=e.clock,
            calendar=e.calendar,
            moves=moves[view.id],
        )
    await measures_store.save(conn, found)
