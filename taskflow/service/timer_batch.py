"""A worker batch's runs held in memory: firings change them, one flush writes them all.

A use case loads one run, decides, and writes (``persist.outcome`` and
``deadlines.carry_out``). A worker fires up to a batch of timers in one
transaction, so it loads the batch's runs, slots, clocks and timers at once,
lets each firing change a :class:`RunState` in memory the way those use-case
writes would change the rows (a later firing on the same run sees what an
earlier one did), and :func:`flush` writes the lot with one statement per
table. The decisions are the same pure functions the use cases call; only
where their results go differs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from taskflow.core import deadlines, timer_states
from taskflow.core.runs.model import ENDED, AuditEntry, Outcome, RunView, SlotView
from taskflow.core.timer_states import TimerStatus
from taskflow.service import deadlines as sla_service
from taskflow.store import db, timeline
from taskflow.store import deadlines as store
from taskflow.store import notifications as outbox
from taskflow.store import runs as rows
from taskflow.store import steps as step_rows
from taskflow.store import timer_batch as batch_store

ARMED = TimerStatus.ARMED


@dataclass
class RunState:
    """A locked run as the batch's firings left it, and what is still to be written."""

    run: RunView
    slots: dict[str, SlotView]
    timers: dict[str, store.TimerRow]
    # -- to write ------------------------------------------------------------------------------
    run_writes: int = 0
    new_slots: dict[str, SlotView] = field(default_factory=dict)
    changed_slots: dict[str, SlotView] = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)
    clocks: dict[tuple[str, str], store.ClockRow] = field(default_factory=dict)
    due: dict[str, tuple[int, datetime | None]] = field(default_factory=dict)
    breaches: dict[tuple[str, str], datetime] = field(default_factory=dict)
    notes: list[outbox.NewNotification] = field(default_factory=list)
    #: Automatic steps the firings made due (``service/step_queue.py``).
    steps: list[step_rows.NewStep] = field(default_factory=list)
    written_timers: set[str] = field(default_factory=set)
    armed: bool = False
    #: Slots the firings ended, for their report measures (read after the timeline is written).
    ended: dict[str, tuple[SlotView, sla_service.Context]] = field(default_factory=dict)

    def copy(self) -> RunState:
        """A copy to go back to when a firing fails half-way (the values are immutable)."""
        return dataclasses.replace(
            self,
            slots=dict(self.slots),
            timers=dict(self.timers),
            new_slots=dict(self.new_slots),
            changed_slots=dict(self.changed_slots),
            audit=list(self.audit),
            clocks=dict(self.clocks),
            due=dict(self.due),
            breaches=dict(self.breaches),
            notes=list(self.notes),
            steps=list(self.steps),
            written_timers=set(self.written_timers),
            ended=dict(self.ended),
        )

    def written(self) -> RunState:
        """The state with nothing left to write (after a flush)."""
        return RunState(self.run, self.slots, self.timers)

    def set_timer(self, timer: store.TimerRow) -> None:
        self.timers[timer.key] = timer
        self.written_timers.add(timer.key)


async def load(conn: db.Connection, found: Mapping[str, rows.RunRow]) -> dict[str, RunState]:
    """The states of these (locked) runs: their slots with clocks, and every timer row."""
    run_ids = sorted(found)
    slots = await store.slots_of_runs(conn, run_ids)
    timers = await batch_store.timers_of_runs(conn, run_ids)
    return {
        run_id: RunState(
            found[run_id].view,
            {s.id: s for s in slots[run_id]},
            {t.key: t for t in timers[run_id]},
        )
        for run_id in run_ids
    }


# -- what a use case's writes would do, done to the state ---------------------------------------


def outcome(state: RunState, result: Outcome, ctx: sla_service.Context, now: datetime) -> None:
    """:func:`taskflow.service.persist.outcome` (with ``sla``) into the batch."""
    state.run = result.run
    if result.run_changed:
        state.run_writes += 1
    for view in result.created:
        state.new_slots[view.id] = view
        state.slots[view.id] = view
    for view in result.changed:
        if view.id in state.new_slots:
            state.new_slots[view.id] = view
        else:
            state.changed_slots[view.id] = view
        state.slots[view.id] = view
    state.audit += sla_service.timeline(result, ctx, now)
    carry_out(state, [*result.created, *result.changed], ctx, now, run_changed=result.run_changed)


def carry_out(
    state: RunState,
    slots: Sequence[SlotView],
    ctx: sla_service.Context,
    now: datetime,
    *,
    run_changed: bool,
) -> None:
    """:func:`taskflow.service.deadlines.after_outcome` into the batch: ledgers, dues, timers."""
    clock_rows, due_rows = sla_service.ledgers(slots, ctx.registry)
    state.ended.update((v.id, (v, ctx)) for v in slots if v.status in ENDED)
    for row in clock_rows:
        state.clocks[(row.slot_id, row.clock.milestone)] = row
    for slot_id, visit, due in due_rows:
        state.due[slot_id] = (visit, due)
    fired = {key: t.fired for key, t in state.timers.items()}
    if slots:
        ids = {s.id for s in slots}
        _reconcile(
            state,
            [t for t in state.timers.values() if t.slot_id in ids],
            [
                spec
                for view in slots
                for spec in deadlines.slot_timers(ctx.definition, view, ctx.registry, fired)
            ],
        )
    if run_changed:
        _reconcile(
            state,
            [t for t in state.timers.values() if t.slot_id is None],
            deadlines.state_timers(ctx.definition, state.run, ctx.registry, fired),
        )


def _reconcile(
    state: RunState, existing: Sequence[store.TimerRow], wanted: Sequence[deadlines.TimerSpec]
) -> None:
    cancel, arm = store.differences(existing, wanted)
    for timer in cancel:
        state.set_timer(dataclasses.replace(timer, status=TimerStatus.CANCELLED))
    for spec in arm:
        old = state.timers.get(spec.key)
        if old is None:
            old = store.TimerRow(0, spec.key, spec.run_id, spec.slot_id, spec.kind, spec.ref,
                                 spec.due_at, ARMED, 0)  # fmt: skip
        state.set_timer(
            dataclasses.replace(old, due_at=spec.due_at, status=ARMED, attempts=0, planned_at=None)
        )
        state.armed = True


def retire(state: RunState, timer: store.TimerRow, status: str) -> int:
    """Count a firing (``fired``) or drop the row (``cancelled``); returns the firing count.

    A firing that went through clears the failures before it.
    """
    if status == TimerStatus.FIRED:
        timer = dataclasses.replace(
            timer, fired=timer.fired + 1, attempts=0, last_error=None, planned_at=None
        )
    state.set_timer(dataclasses.replace(timer, status=status))
    return timer.fired


def failed(
    state: RunState,
    timer: store.TimerRow,
    error: BaseException,
    now: datetime,
    policy: timer_states.RetryPolicy,
    jitter: float,
) -> timer_states.Failure:
    """Count a failed firing: the row is tried again after a backoff, or parked dead."""
    failure = timer_states.after_failure(timer.attempts, error, now, policy, jitter)
    state.set_timer(
        dataclasses.replace(
            timer,
            status=failure.status,
            attempts=failure.attempts,
            last_error=failure.error,
            failed_at=now,
            planned_at=timer.planned,
            due_at=failure.next_at or timer.due_at,
        )
    )
    if failure.status == TimerStatus.DEAD:
        state.audit.append(
            AuditEntry(
                "timer.dead",
                now,
                None,
                timer.slot_id,
                f"the {timer.kind} timer failed {failure.attempts} times and was parked: "
                "an admin may retry or discard it",
                {
                    "key": timer.key,
                    "kind": timer.kind,
                    "attempts": failure.attempts,
                    "error": failure.error,
                },
            )
        )
    return failure


# -- writing ------------------------------------------------------------------------------------


async def flush(conn: db.Connection, states: Sequence[RunState], now: datetime) -> None:
    """Write what the firings did to ``states``: one statement per table touched."""
    await batch_store.update_runs(
        conn, [(s.run, s.run_writes) for s in states if s.run_writes], now
    )
    by_workflow: dict[str, list[SlotView]] = {}
    for s in states:
        if s.new_slots:
            by_workflow.setdefault(s.run.workflow, []).extend(s.new_slots.values())
    for workflow, created in by_workflow.items():
        await rows.insert_slots(conn, created, workflow, now)
    changed = [v for s in states for v in s.changed_slots.values()]
    if changed:
        await rows.update_slots(conn, changed, now)
    await store.save_clocks(conn, [c for s in states for c in s.clocks.values()], now)
    await batch_store.mark_breached(
        conn, [(slot, m, at) for s in states for (slot, m), at in s.breaches.items()]
    )
    await store.set_slot_due(
        conn, [(slot, visit, due) for s in states for slot, (visit, due) in s.due.items()], now
    )
    await timeline.append_audits(conn, [(s.run.id, e) for s in states for e in s.audit])
    await sla_service.save_measures(conn, [e for s in states for e in s.ended.values()])
    await outbox.notify(conn, [n for s in states for n in s.notes])
    await step_rows.enqueue_many(conn, [n for s in states for n in s.steps])
    await batch_store.write_timers(
        conn,
        [s.timers[key] for s in states for key in sorted(s.written_timers)],
        now,
        notify=any(s.armed for s in states),
    )
