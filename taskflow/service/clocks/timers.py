"""Firing due timers (the worker's work; ``run_due`` for tests), SKIP LOCKED, one transaction.

One batch is one transaction. It takes the runs of due timers first, with ``FOR NO KEY
UPDATE SKIP LOCKED``, then their live slots, then the timers (the lock order of
docs/architecture.md): another worker never gets them, and a timer whose run is busy in a
use case is left for the next pass rather than waited for. A batch that still loses a race
inside PostgreSQL is run again (``retry.py``). The batch's slots, clocks and timer rows are
loaded at once; each firing decides with the same pure functions a use case uses and
changes its run's state in memory (``timer_batch.py``), so a later firing on the same run
sees an earlier one's effects; one flush then writes every table touched with one
statement. A firing that fails is logged and tried again after an exponential backoff with
jitter, without undoing the others; after ``TASKFLOW_TIMER_MAX_ATTEMPTS`` failures it is
parked ``dead`` with its last error (``core/clocks/timer_states.py``) until an admin
retries or discards it. ``fired`` counts firings; a repeating reminder's row is re-armed in
place for its next firing by the same reconciliation that every use case runs.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg

from taskflow.core.clocks import clock_lines, deadlines, expiry, timer_states
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import LIVE, AuditEntry, RunView, SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.clocks import deadline_firing, expiry_firing, slot_actions
from taskflow.service.clocks import deadlines as clock_service
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics
from taskflow.service.runs import buffered, persist
from taskflow.service.steps import step_queue
from taskflow.store.clocks import deadlines as store
from taskflow.store.clocks import timer_batch as batch_store
from taskflow.store.common import db
from taskflow.store.common import unit_of_work as writer

log = logging.getLogger("taskflow.worker")

DEFAULT_BATCH = 100
#: The channel workers LISTEN on; arming a timer NOTIFYs it at commit.
CHANNEL = store.CHANNEL


def retry_policy(services: Services) -> timer_states.RetryPolicy:
    """How failed firings are retried (``TASKFLOW_TIMER_MAX_ATTEMPTS`` and the backoff)."""
    settings = services.settings
    return timer_states.RetryPolicy(
        max_attempts=settings.timer_max_attempts,
        base_seconds=settings.timer_backoff_base,
        max_seconds=settings.timer_backoff_max,
    )


async def run_due(services: Services, now: datetime, *, batch: int = DEFAULT_BATCH) -> int:
    """Fire every timer due at ``now`` (tests step time with this); returns how many fired."""
    total = 0
    while True:
        fired, taken = await fire_batch(services, now, batch)
        total += fired
        if taken < batch:
            return total


async def next_due(services: Services, now: datetime) -> datetime | None:
    """The nearest instant after ``now`` at which an armed timer falls due (None: none is)."""
    async with services.db.connection() as conn:
        return await store.next_due(conn, now)


async def fire_batch(services: Services, now: datetime, batch: int) -> tuple[int, int]:
    """One transaction: up to ``batch`` due timers; (fired, taken).

    The firings change the batch's runs in memory and one flush writes them (a
    statement per table). When a firing raises, or the database refuses the
    flush, the batch rolls back and runs again writing each firing in a
    savepoint of its own, so the failing one is postponed and the others fire.
    """
    # Kept events past their time are dropped here: no timer is armed for each.
    await buffered.expire_due(services, now)

    async def once() -> tuple[int, int]:
        try:
            return await _fire_batch(services, now, batch, isolate=False)
        except _FiringFailed:
            return await _fire_batch(services, now, batch, isolate=True)

    # A lost race (deadlock, serialization failure) rolled the whole batch back: run it again.
    return await retry.run(services, "fire timers", once)


class _FiringFailed(Exception):
    """A firing, or the batch's flush, raised (the batch was rolled back)."""


async def _fire_batch(
    services: Services, now: datetime, batch: int, *, isolate: bool
) -> tuple[int, int]:
    fired = 0
    # What to count once the batch has committed: (kind, outcome, lag).
    seen: list[tuple[str, str, timedelta | None]] = []
    async with services.db.transaction() as conn:
        timers, runs = await batch_store.take_due(conn, now, batch)
        if not timers:
            return 0, 0
        states = await runs_batch.load(conn, runs)
        for timer in timers:
            if not isolate:
                try:
                    count = await fire_one(services, conn, states[timer.run_id], timer, now)
                except NOT_THE_FIRING:
                    raise
                except Exception as exc:
                    raise _FiringFailed(timer.key) from exc
                fired += count
                if count:
                    seen.append((timer.kind, "fired", now - timer.due_at))
                continue
            state = states[timer.run_id]
            trial = state.copy()  # kept only if the firing and its writes succeed
            try:
                async with conn.transaction():
                    count = await fire_one(services, conn, trial, timer, now)
                    await runs_batch.flush(conn, [trial], now)
            except NOT_THE_FIRING:
                raise
            except Exception as exc:
                failure = runs_batch.failed(
                    state,
                    state.timers.get(timer.key, timer),
                    exc,
                    now,
                    retry_policy(services),
                    random.random(),  # jitter, not a secret
                )
                log.exception(
                    "timer %s (%s) failed (attempt %d); %s",
                    timer.key,
                    timer.kind,
                    failure.attempts,
                    f"next attempt at {failure.next_at.isoformat()}"
                    if failure.next_at
                    else "parked dead",
                )
                await _write_failure(conn, state, timer.key, now)
                states[timer.run_id] = state.written()
                seen.append((timer.kind, "failed" if failure.next_at else "dead", None))
                continue
            states[timer.run_id] = trial.written()
            fired += count
            if count:
                seen.append((timer.kind, "fired", now - timer.due_at))
        if not isolate:
            try:
                await runs_batch.flush(conn, list(states.values()), now)
            except NOT_THE_FIRING:
                raise
            except Exception as exc:
                raise _FiringFailed("flush") from exc
        # Slots the firings opened take the events their runs kept (same transaction).
        await buffered.after_batch(
            conn, services, [s.run for s in states.values()], now, persist.write
        )
        # Slots the outcomes opened on a chain asking the team count on the team's calendar.
        await clock_service.opened_by_batch(
            services, conn, [(s.run, s.slots.values()) for s in states.values()], now
        )
    # Counted only once the batch has committed (a batch run again counts once).
    for kind, outcome, lag in seen:
        metrics.firing(kind, outcome, lag)
    _log_batch(len(timers), fired, seen)
    return fired, len(timers)


def _log_batch(taken: int, fired: int, seen: list[tuple[str, str, timedelta | None]]) -> None:
    """One line per batch that took timers: taken, fired, failed, the largest lag (ms)."""
    failed = sum(1 for _, outcome, _ in seen if outcome != "fired")
    lags = [lag for _, _, lag in seen if lag is not None]
    lag_ms = round(max(lags).total_seconds() * 1000) if lags else None
    log.info(
        "timer batch: took %d, fired %d, failed %d",
        taken,
        fired,
        failed,
        extra={"taken": taken, "fired": fired, "failed": failed, "lag_ms": lag_ms},
    )


async def _write_failure(
    conn: db.Connection, state: runs_batch.RunState, key: str, now: datetime
) -> None:
    """Write a failed firing's row (and its ``timer.dead`` line); when the database refuses
    the line too, the row alone, so the failure is counted whatever else is broken."""
    try:
        async with conn.transaction():
            await runs_batch.flush(conn, [state], now)
    except DATABASE_ERRORS:
        raise
    except Exception:
        log.exception("timer %s: its failure's timeline line was refused; row only", key)
        await writer.write(conn, uow.Writes(timers=(state.timers[key],)), now)


#: Errors that are about the connection, not the firing: they end the batch (the worker
#: retries it once the database is back).
DATABASE_ERRORS = (
    OSError,
    ConnectionError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)
#: Errors that say nothing about a firing: the connection's, and a race lost inside PostgreSQL
#: (retried whole, see ``service/common/retry.py``); a firing is never postponed for them.
NOT_THE_FIRING = (*DATABASE_ERRORS, *retry.LOST_RACE)


@dataclass(frozen=True)
class _Live:
    definition: Definition
    slot: SlotView | None


def _live(services: Services, state: runs_batch.RunState, timer: store.TimerRow) -> _Live | None:
    """The definition and slot a timer acts on, or None when its run or slot has ended."""
    run = state.run
    if run.status != RunStatus.ACTIVE:
        return None
    definition = services.catalog.get(run.workflow, run.definition_version)
    slot = state.slots.get(timer.slot_id) if timer.slot_id is not None else None
    if timer.slot_id is not None and (slot is None or slot.status not in LIVE):
        return None
    return _Live(definition, slot)


async def fire_one(
    services: Services,
    conn: db.Connection,
    state: runs_batch.RunState,
    taken: store.TimerRow,
    now: datetime,
) -> int:
    """Apply one timer's effect to its run's state and retire or re-arm it; 1 if it fired.

    0 when it was stale: its run or slot ended, or an earlier firing of the batch moved or
    cancelled it. Only recipients are read here (``conn``); writes wait for the flush.
    """
    timer = state.timers.get(taken.key)
    if timer is None or timer.status != timer_states.TimerStatus.ARMED or timer.due_at > now:
        return 0
    if timer.kind in deadline_firing.KINDS:  # the run's own: a delayed start, its deadline
        return await deadline_firing.fire(services, conn, state, timer, now)
    loaded = _live(services, state, timer)
    run = state.run
    if loaded is None or (timer.kind in _OF_A_VISIT and not _same_visit(timer, run)):
        runs_batch.retire(state, timer, timer_states.TimerStatus.CANCELLED)
        return 0
    count = runs_batch.retire(state, timer, timer_states.TimerStatus.FIRED)
    if timer.kind in step_queue.KINDS:  # a step's row, run outside this transaction
        step_queue.fired(services, state, loaded.definition, timer, count, now)
        return 1
    if timer.kind in expiry.KINDS and loaded.slot is not None:
        return await expiry_firing.fire(
            services, conn, state, loaded.definition, loaded.slot, timer, now
        )
    late = now - timer.due_at
    base = {
        "key": timer.key,
        "due_at": timer.due_at.isoformat(),
        "late_seconds": round(late.total_seconds(), 3),
    }
    slot = loaded.slot
    if timer.kind in (deadlines.AT_RISK, deadlines.BREACH):  # at risk: a line, nothing else
        assert slot is not None
        if timer.kind == deadlines.BREACH:
            state.breach(slot.id, timer.ref, timer.due_at)
        entry = clock_lines.clock_firing(
            timer.kind, slot, timer.ref, timer.due_at, services.calendars, now, base
        )
        slot_actions.resync(services, state, loaded.definition, slot, slot, now, [entry])
        return 1
    if timer.kind == deadlines.REMINDER:
        assert slot is not None
        decl = loaded.definition.slot(slot.state, slot.name)
        rem = decl.reminders[int(timer.ref)]
        message = f"{slot.label}: {rem.describe()}"
        kind, actions, quiet = "reminder.fired", rem.actions, rem.quiet_hours
        details = {**base, "slot": slot.name, "reminder": rem.describe(), "firing": count}
    else:
        timeout = loaded.definition.state(run.state).timeouts[int(timer.ref)]
        decl = None
        message = f"{run.state}: {timeout.describe()}"
        kind, actions, quiet = "timeout.fired", timeout.actions, False
        details = {**base, "state": run.state, "timeout": timeout.describe()}
        steps = [p for a in actions if a.kind == "run" and (p := step_queue.path(a.step))]
        if steps:
            step_queue.timeout_actions(state, timer, steps, now)
    fired = AuditEntry(kind, now, None, slot.id if slot else None, message, details)
    await slot_actions.carry_out(
        services, conn, state, loaded.definition, slot, decl, actions,
        kind=kind, message=message, heads=(fired,), quiet=quiet, now=now,
    )  # fmt: skip
    return 1


_OF_A_VISIT = (deadlines.TIMEOUT, *step_queue.KINDS)  # stale once the run left the visit


def _same_visit(timer: store.TimerRow, run: RunView) -> bool:
    return timer.key.startswith(f"{run.id}:{run.visit}:")
