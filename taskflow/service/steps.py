"""Running automatic steps: take due steps under a lease, run actions, decide what follows.

A worker takes up to a batch of due step rows in a short transaction (``FOR
UPDATE SKIP LOCKED``), each starting its next attempt under a lease
(``TASKFLOW_STEP_LEASE``). It runs each action outside any transaction, with the
per-attempt timeout of the state's retry policy (never beyond the lease), then
finishes the attempt in one transaction that follows the lock order: the run,
its live slots, then the step row. Success stores the result and, for a state's
action, takes its ``on_success`` route through the same write path as every use
case (:func:`taskflow.service.runs.decide`); a failure waits for the next attempt
by the policy, or after the last one takes the matching ``on_error`` route, or
parks the step for an operator (``STEP_PARKED`` in needs attention, ``retryStep``).

A worker killed mid-action leaves its step ``running``; once the lease has run
out another worker takes it again (at-least-once; the attempt's idempotency key
is the step's, the same for every attempt). An attempt that finishes after its
lease ran out and another worker took the step is recorded as ``discarded``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import random
import socket
import time
import traceback
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow import steps as api
from taskflow.core import calendars
from taskflow.core.definition import retries
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import automatic
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import AuditEntry
from taskflow.service import deadlines, metrics, persist, retry, runs, step_actions, step_queue
from taskflow.service import timers as timer_service
from taskflow.service.container import Services
from taskflow.store import locks
from taskflow.store import runs as rows
from taskflow.store import steps as store

log = logging.getLogger("taskflow.worker")

#: This process, as the ``worker`` of the attempts it runs.
WORKER = f"{socket.gethostname()}:{os.getpid()}"
#: Characters of an error's message and traceback kept on its attempt.
MESSAGE_CHARS, TRACE_CHARS = 1000, 4000


@dataclass(frozen=True)
class Ended:
    """How one attempt ended (``error`` None: it succeeded with ``value``)."""

    value: Any
    error: BaseException | None
    seconds: float


async def run_due(services: Services, now: datetime, *, batch: int = 100) -> int:
    """Fire due timers and run due steps at ``now`` until nothing more is due (tests step
    time with this; no server needed); returns how many attempts ran."""
    total = 0
    while True:
        fired = await timer_service.run_due(services, now, batch=batch)
        ran = 0
        while taken := await run_batch(services, now, batch):
            ran += taken
        total += ran
        if not fired and not ran:
            return total


async def next_due(services: Services, now: datetime) -> datetime | None:
    """The nearest instant after ``now`` at which a step falls due (or a lease runs out)."""
    async with services.db.connection() as conn:
        return await store.next_due(conn, now)


async def run_batch(services: Services, now: datetime, batch: int, worker: str = WORKER) -> int:
    """Take up to ``batch`` due steps and run them (a few at once); returns how many."""
    lease = services.settings.step_lease
    async with services.db.transaction() as conn:
        taken = await store.take(conn, now, batch, lease, worker)
    if not taken:
        return 0
    gate = asyncio.Semaphore(services.settings.step_concurrency)

    async def one(step: store.StepRow) -> None:
        async with gate:
            try:
                await execute(services, step)
            except Exception:
                # Its lease runs out and another attempt follows: never stop the others.
                log.exception("step %s (%s) could not be finished", step.key, step.action)

    await asyncio.gather(*(one(s) for s in taken))
    return len(taken)


def policy_of(definition: Definition, step: store.StepRow) -> retries.Policy:
    """The retry policy of a step: its state's for a state's action, one attempt otherwise."""
    if step.kind != step_queue.ACTION:
        return retries.ONCE
    return definition.state(step.state).policy


@dataclass
class _Recorder:
    """``steps.once`` for one run: read, and record with a timeline line under the run lock."""

    services: Services
    run_id: str
    step_key: str

    async def get(self, name: str) -> tuple[bool, Any]:
        async with self.services.db.connection() as conn:
            return await store.once_get(conn, self.run_id, name)

    async def put(self, name: str, value: Any) -> Any:
        json.dumps(value)  # refuse what cannot be stored before anything is written
        now = self.services.clock.now()
        async with self.services.db.transaction() as conn:
            await locks.lock_run(conn, self.run_id)  # the run first, as every timeline writer
            kept, fresh = await store.once_put(conn, self.run_id, name, value, now)
            if fresh:
                line = AuditEntry(
                    "step.once",
                    now,
                    None,
                    None,
                    f"recorded {name!r} once for the run",
                    {"name": name, "value": value, "step": self.step_key},
                )
                await persist.audit(conn, self.run_id, line)
        return kept


async def execute(services: Services, step: store.StepRow) -> None:
    """Run one taken attempt of ``step`` and finish it."""
    definition = services.catalog.get(step.workflow, step.definition_version)
    async with services.db.connection() as conn:
        found = await rows.get_run(conn, step.run_id)
        slots = await deadlines.load_slots(conn, step.run_id) if found else []
    if found is None or not automatic.current(found.view, step.state, step.visit):
        await _finish(services, definition, step, Ended(None, None, 0.0), stale=True)
        return
    run = found.view
    policy = policy_of(definition, step)
    limit = services.settings.step_lease
    if policy.timeout is not None:
        limit = min(limit, policy.timeout.total_seconds())
    payload = Decision(definition, run, slots, now=step.due_at, actor=None, new_id=str).payloads()
    ctx = api.StepContext(
        run_id=run.id,
        workflow=run.workflow,
        state=step.state,
        kind=step.kind,
        subject=run.subject,
        idempotency_key=f"{step.key}",
        attempt=step.attempt,
        now=services.clock.now(),
        payload=payload,
        result=run.results,
        settings=services.settings,
    )
    started = time.monotonic()
    try:
        action = step_actions.resolve(step.action)
        with api.recording(_Recorder(services, run.id, step.key)):
            value = await asyncio.wait_for(action(ctx), limit)
        json.dumps(value)  # a result must be JSON-able: it is stored on the run
        ended = Ended(value, None, time.monotonic() - started)
    except Exception as exc:
        ended = Ended(None, exc, time.monotonic() - started)
    await retry.run(services, "finish a step", lambda: _finish(services, definition, step, ended))


def error_classes(error: BaseException) -> list[str]:
    """The names of the error's class and its bases (``on_error`` and policies match them)."""
    return [c.__name__ for c in type(error).__mro__ if c not in (object, BaseException)]


def _error_parts(error: BaseException) -> tuple[str, str, str]:
    cls = type(error).__name__
    message = str(error)[:MESSAGE_CHARS] or cls
    trace = "".join(traceback.format_exception(error, limit=-4))[-TRACE_CHARS:]
    return cls, message, trace


def _calendar(services: Services, definition: Definition, policy: retries.Policy) -> Any:
    if policy.time != "business":
        return calendars.REAL_TIME
    name = policy.calendar or definition.calendar
    return services.calendars.get(name) if name else calendars.REAL_TIME


async def _finish(
    services: Services,
    definition: Definition,
    step: store.StepRow,
    ended: Ended,
    *,
    stale: bool = False,
) -> None:
    """One transaction, in the lock order (the run, its live slots, the step row)."""
    ms = round(ended.seconds * 1000)
    err = _error_parts(ended.error) if ended.error is not None else None
    outcome = "succeeded" if err is None else "failed"
    async with services.db.transaction() as conn:
        now = services.clock.now()
        found = await rows.get_run(conn, step.run_id, lock=True)
        await locks.lock_live_slots(conn, [step.run_id])
        row = await store.lock(conn, step.id)
        if row is None or row.status != store.RUNNING or row.attempts != step.attempts:
            # The lease ran out and another worker took the step: its attempt counts.
            await store.finish_attempt(conn, step.id, step.attempts, now, "discarded", ms, err)
            outcome = "discarded"
        elif stale or found is None or not automatic.current(found.view, step.state, step.visit):
            await store.finish_attempt(conn, step.id, step.attempts, now, "discarded", ms, err)
            await store.settle(conn, step.id, store.CANCELLED, now)
            outcome = "discarded"
        elif err is None:
            await store.finish_attempt(conn, step.id, step.attempts, now, "succeeded", ms)
            await store.settle(conn, step.id, store.SUCCEEDED, now, result=ended.value)
            await _succeeded(services, conn, definition, step, ended, now, ms)
        else:
            assert ended.error is not None
            await store.finish_attempt(conn, step.id, step.attempts, now, "failed", ms, err)
            outcome = await _failed(services, conn, definition, step, ended.error, err, now, ms)
    metrics.step_attempt(step.workflow, outcome, ended.seconds)


def _details(step: store.StepRow, ms: int, **more: Any) -> dict[str, Any]:
    return {
        "step": step.key,
        "step_kind": step.kind,
        "action": step.action,
        "attempt": step.attempts,
        "duration_ms": ms,
        **more,
    }


async def _succeeded(
    services: Services,
    conn: Any,
    definition: Definition,
    step: store.StepRow,
    ended: Ended,
    now: datetime,
    ms: int,
) -> None:
    details = _details(step, ms, result=ended.value)
    if step.kind != step_queue.ACTION:
        line = AuditEntry(
            "step.succeeded", now, None, None, f"{step.state}: {step.action} succeeded", details
        )
        await persist.audit(conn, step.run_id, line)
        return
    await store.store_result(conn, step.run_id, step.state, ended.value)
    await runs.decide(
        services,
        conn,
        step.run_id,
        lambda d, run, slots, at: automatic.succeeded(
            d,
            dataclasses.replace(run.view, results={**run.view.results, step.state: ended.value}),
            slots,
            result=ended.value,
            details=details,
            now=at,
            new_id=persist.new_id,
        ),
        now=now,
    )


async def _failed(
    services: Services,
    conn: Any,
    definition: Definition,
    step: store.StepRow,
    error: BaseException,
    err: tuple[str, str, str],
    now: datetime,
    ms: int,
) -> str:
    """The attempt failed: wait for the next, take ``on_error``, or park; the outcome label."""
    classes = error_classes(error)
    policy = policy_of(definition, step)
    text = f"{err[0]}: {err[1]}"
    cal = _calendar(services, definition, policy)
    next_at = retries.next_attempt_at(policy, step.attempt, now, cal, random.random(), classes)
    details = _details(step, ms, error=text, error_class=err[0])
    if next_at is not None:
        await store.retry_at(conn, step.id, next_at, text, now)
        line = AuditEntry(
            "step.retrying",
            now,
            None,
            None,
            f"{step.state}: attempt {step.attempt} failed ({text}); next attempt at "
            f"{next_at.isoformat()}",
            {**details, "next_at": next_at.isoformat()},
        )
        await persist.audit(conn, step.run_id, line)
        return "retrying"
    routed = step.kind == step_queue.ACTION and (
        automatic.error_route(definition, step.state, classes) is not None
    )
    if step.kind == step_queue.ACTION:
        await runs.decide(
            services,
            conn,
            step.run_id,
            lambda d, run, slots, at: automatic.failed(
                d,
                run.view,
                slots,
                error_classes=classes,
                details=details,
                now=at,
                new_id=persist.new_id,
            ),
            now=now,
        )
    else:
        line = AuditEntry(
            "step.parked",
            now,
            None,
            None,
            f"{step.state}: {step.action} failed ({text}); an operator retries it (retryStep)",
            details,
        )
        await persist.audit(conn, step.run_id, line)
    await store.settle(conn, step.id, store.FAILED if routed else store.PARKED, now, error=text)
    return "failed" if routed else "parked"
