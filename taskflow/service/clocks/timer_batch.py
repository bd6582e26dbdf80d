"""A worker batch's runs held in memory: firings change them, one write carries them all out.

A use case loads one run, decides, and writes one unit of work (``persist.py``). A
worker fires up to a batch of timers in one transaction, so it loads the batch's runs,
slots, clocks and timers at once, and each firing plans its writes with the same
planner (``core/common/unit_of_work.plan``) against a :class:`RunState` in memory (a later
firing on the same run sees what an earlier one did); the states' writes merge into one
``Writes`` that :func:`flush` hands to the same writer (``store/common/unit_of_work.write``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from taskflow.core.clocks import timer_states
from taskflow.core.clocks.timer_states import TimerRow, TimerStatus
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.store.clocks import deadlines as store
from taskflow.store.clocks import timer_batch as batch_store
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer
from taskflow.store.delivery import notifications as outbox
from taskflow.store.runs import runs as rows
from taskflow.store.steps import steps as step_rows


@dataclass
class RunState:
    """A locked run as the batch's firings left it, and what is still to be written."""

    run: RunView
    slots: dict[str, SlotView]
    timers: dict[str, TimerRow]
    #: What the firings so far decided to write (merged in order).
    writes: uow.Writes = field(default_factory=uow.Writes)
    notes: list[outbox.NewNotification] = field(default_factory=list)
    #: Automatic steps the firings made due (``service/steps/step_queue.py``).
    steps: list[step_rows.NewStep] = field(default_factory=list)

    def copy(self) -> RunState:
        """A copy to go back to when a firing fails half-way (the values are immutable)."""
        return RunState(
            self.run,
            dict(self.slots),
            dict(self.timers),
            self.writes,
            list(self.notes),
            list(self.steps),
        )

    def written(self) -> RunState:
        """The state with nothing left to write (after a flush)."""
        return RunState(self.run, self.slots, self.timers)

    def add(self, writes: uow.Writes) -> None:
        """Take ``writes`` in: the rows in memory now are as they will be written."""
        self.writes = self.writes.merge(writes)
        for view, _ in writes.runs:
            self.run = view
        self.slots.update((v.id, v) for _, v in writes.created)
        self.slots.update((v.id, v) for v in writes.changed)
        self.timers.update((t.key, t) for t in writes.timers)

    def log(self, *lines: AuditEntry) -> None:
        """Timeline lines that change nothing else."""
        self.add(uow.Writes(lines=tuple((self.run.id, line) for line in lines)))

    def breach(self, slot_id: str, milestone: str, at: datetime) -> None:
        """Record that a clock ran out (the first record stays)."""
        self.add(uow.Writes(breaches=((slot_id, milestone, at),)))


async def load(conn: db.Connection, found: Mapping[str, rows.RunRow]) -> dict[str, RunState]:
    """The states of these (locked) runs: their slots with clocks, and every timer row."""
    return await load_views(conn, {run_id: row.view for run_id, row in found.items()})


async def load_views(conn: db.Connection, found: Mapping[str, RunView]) -> dict[str, RunState]:
    """:func:`load` for runs given as the engine's views."""
    run_ids = sorted(found)
    slots = await store.slots_of_runs(conn, run_ids)
    timers = await batch_store.timers_of_runs(conn, run_ids)
    return {
        run_id: RunState(
            found[run_id],
            {s.id: s for s in slots[run_id]},
            {t.key: t for t in timers[run_id]},
        )
        for run_id in run_ids
    }


def outcome(
    state: RunState, result: Outcome, ctx: uow.Context, now: datetime, *, rows: bool = True
) -> None:
    """Plan ``result`` against the state (the planner use cases call) and take it in;
    ``rows=False``: the slots are as the state holds them, only their deadlines move."""
    state.add(uow.plan(result, ctx, list(state.timers.values()), now, rows=rows))
    state.run = result.run


def retire(state: RunState, timer: TimerRow, status: str) -> int:
    """Count a firing (``fired``) or drop the row (``cancelled``); returns the firing count.

    A firing that went through clears the failures before it.
    """
    if status == TimerStatus.FIRED:
        timer = dataclasses.replace(
            timer, fired=timer.fired + 1, attempts=0, last_error=None, planned_at=None
        )
    state.add(uow.Writes(timers=(dataclasses.replace(timer, status=status),)))
    return timer.fired


def fire_if(state: RunState, timer: TimerRow, status: str) -> bool:
    """Count a run's own timer fired when its run is ``status`` (True); else retire it
    cancelled (False): the run moved on before the timer's instant."""
    if state.run.status != status:
        retire(state, timer, TimerStatus.CANCELLED)
        return False
    retire(state, timer, TimerStatus.FIRED)
    return True


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
    row = dataclasses.replace(
        timer,
        status=failure.status,
        attempts=failure.attempts,
        last_error=failure.error,
        failed_at=now,
        planned_at=timer.planned,
        due_at=failure.next_at or timer.due_at,
    )
    state.add(uow.Writes(timers=(row,)))
    if failure.status == TimerStatus.DEAD:
        state.log(
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


async def flush(
    conn: db.Connection,
    states: Sequence[RunState],
    now: datetime,
    *,
    quiet: Collection[str] = (),
) -> None:
    """Write what the firings did to ``states``: their writes merged, through the one writer
    (``quiet``: runs with no due step row of a state they leave, see ``writer.write``)."""
    await writer.write(conn, uow.merged(s.writes for s in states), now, quiet=quiet)
    await outbox.notify(conn, [n for s in states for n in s.notes])
    await step_rows.enqueue_many(conn, [n for s in states for n in s.steps])
