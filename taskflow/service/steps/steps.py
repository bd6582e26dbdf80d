"""Running automatic steps: take due steps under a lease, run actions, decide what follows.

A worker takes up to a batch of due step rows in one statement (``FOR UPDATE
SKIP LOCKED``), each starting its next attempt under a lease
(``TASKFLOW_STEP_LEASE``), with the runs they belong to. It runs the actions
outside any transaction (a few at once), each with the per-attempt timeout of its
state's retry policy (never beyond the lease), then finishes the batch in one
transaction that follows the lock order: the runs, their live slots, then the step
rows (:class:`Pipeline` lets a worker take the next batch meanwhile; ``step_batch.py``,
which decides with :mod:`taskflow.core.steps.automatic`, plans with the unit of
work's planner and writes through its one writer).
Success stores the result and, for a state's action, takes its ``on_success``
route; a failure waits for the next attempt by the policy, or after the last
one takes the matching ``on_error`` route, or parks the step for an operator
(``STEP_PARKED`` in needs attention, ``retryStep``).

A worker killed mid-action leaves its step ``running``; once the lease has run
out another worker takes it again (at-least-once; the attempt's idempotency key
is the step's, the same for every attempt). An attempt that finishes after its
lease ran out and another worker took the step is recorded as ``discarded``.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import socket
import time
import traceback
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.clocks import calendars
from taskflow.core.definition import actors, retries
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import AuditEntry
from taskflow.core.steps import automatic
from taskflow.service.clocks import timers as timer_service
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics
from taskflow.service.runs import persist
from taskflow.service.steps import authoring as api
from taskflow.service.steps import step_actions, step_batch, step_queue
from taskflow.service.steps import step_guard as guard
from taskflow.store.clocks import deadlines as deadline_rows
from taskflow.store.common import locks
from taskflow.store.steps import steps as store

log = logging.getLogger("taskflow.worker")

#: This process, as the ``worker`` of the attempts it runs.
WORKER = f"{socket.gethostname()}:{os.getpid()}"
#: Actions a worker runs at once.
CONCURRENCY = 8
#: Batches a worker finishes at once (while it takes and runs the next one).
FINISHING = 2
#: Characters of an error's message and traceback kept on its attempt.
MESSAGE_CHARS, TRACE_CHARS = 1000, 4000


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
    """Take up to ``batch`` due steps, run their actions (a few at once), then finish them
    in one transaction (``step_batch.py``); returns how many were taken."""
    steps = Pipeline(services, worker)
    taken = await steps.run_batch(now, batch)
    await steps.drain()
    return taken


class Pipeline:
    """A worker's batches of steps, each finished while the next ones are taken and their
    actions run: the database writes one batch while this process prepares the next. At
    most :data:`FINISHING` finishes are under way at once (each in a transaction of its
    own, as two workers' would be: runs shared by two batches are decided in the order
    their locks are granted); :meth:`drain` waits for them all."""

    def __init__(self, services: Services, worker: str = WORKER) -> None:
        self.services = services
        self.worker = worker
        self._finishing: list[asyncio.Task[None]] = []

    async def run_batch(self, now: datetime, batch: int) -> int:
        """Take up to ``batch`` due steps and run their actions; their finish is under way
        when this returns (:meth:`drain` waits for it). Returns how many were taken."""
        attempted, taken = await _take_and_run(self.services, now, batch, self.worker)
        while len(self._finishing) >= FINISHING:
            await self._finishing.pop(0)
        if attempted:
            self._finishing.append(
                asyncio.get_running_loop().create_task(
                    _finish_all(self.services, attempted), context=contextvars.Context()
                )
            )
        return taken

    async def drain(self) -> None:
        """Wait until the batches being finished are written."""
        while self._finishing:
            await self._finishing.pop(0)


async def _take_and_run(
    services: Services, now: datetime, batch: int, worker: str
) -> tuple[list[step_batch.Attempted], int]:
    """Take up to ``batch`` due steps and run their actions: (the attempts, how many taken)."""
    lease = services.settings.step_lease
    async with services.db.connection() as conn:  # one statement: its own transaction
        taken = await store.take_batch(conn, now, batch, lease, worker)
        if not taken.steps:
            return [], 0
        runs = taken.runs
        # Payloads for the actions: only runs with slots have any.
        with_slots = sorted(taken.with_slots)
        slots = await deadline_rows.slots_of_runs(conn, with_slots) if with_slots else {}
    done: list[step_batch.Attempted | None] = [None] * len(taken.steps)
    todo = iter(enumerate(taken.steps))

    async def runner() -> None:
        """Run the batch's actions one after the other; CONCURRENCY of these run at once."""
        watchdog = guard.Watchdog()
        try:
            for i, step in todo:
                try:
                    done[i] = await attempt(services, step, runs.get(step.run_id), slots, watchdog)
                except Exception:
                    # Its lease runs out and another attempt follows: never stop the others.
                    log.exception("step %s (%s) could not be run", step.key, step.action)
        finally:
            watchdog.close()

    try:
        await asyncio.gather(*(runner() for _ in range(min(CONCURRENCY, len(taken.steps)))))
    except asyncio.CancelledError:  # the worker stops: hand the steps back, due now
        await _release(services, taken.steps)
        raise
    attempted = [a for a in done if a is not None]
    return attempted, len(taken.steps)


async def _release(services: Services, taken: list[store.StepRow]) -> None:
    """Steps whose actions a stopping worker cut short, due again at once (not at the end of
    their leases); the next worker to take one records this attempt as lost."""
    try:
        async with services.db.transaction() as conn:
            await store.release(conn, taken, services.clock.now())
    except Exception:
        log.warning("%d steps are left to their leases", len(taken), exc_info=True)


async def _finish_all(services: Services, attempted: list[step_batch.Attempted]) -> None:
    """Finish a batch of attempts in one transaction (a lost race runs it again whole)."""

    async def work() -> dict[int, str]:
        return await step_batch.finish(services, attempted)

    try:
        outcomes = await retry.run(services, "finish steps", work)
    except Exception:
        # Their leases run out and other attempts follow: the worker carries on.
        log.exception("a batch of %d steps could not be finished", len(attempted))
        return
    metrics.step_attempts(
        (item.step.workflow, outcomes[item.step.id], item.seconds)
        for item in attempted
        if item.step.id in outcomes
    )
    counts = {o: sum(1 for v in outcomes.values() if v == o) for o in set(outcomes.values())}
    log.info(
        "step batch: ran %d, %s",
        len(attempted),
        ", ".join(f"{o} {n}" for o, n in sorted(counts.items())) or "none finished",
        extra={"ran": len(attempted), **{f"steps_{o}": n for o, n in counts.items()}},
    )


def policy_of(definition: Definition, step: store.StepRow) -> retries.Policy:
    """The retry policy of a step: its state's for a state's action (automatic or on entry),
    one attempt otherwise."""
    if step.kind not in (step_queue.ACTION, step_queue.ENTRY):
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
        guard.once_value(name, value)  # refuse what cannot be stored before writing
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


async def attempt(
    services: Services,
    step: store.StepRow,
    found: store.Seen | None,
    slots: dict[str, list[Any]],
    watchdog: guard.Watchdog | None = None,
) -> step_batch.Attempted:
    """Run the action of a taken step (not when the run has left the step's state: the
    attempt is then ``skipped``, and its step cancelled when the batch finishes), timed by
    ``watchdog`` (the runner's; one of its own when None)."""
    definition = services.catalog.get(step.workflow, step.definition_version)
    policy = policy_of(definition, step)
    calendar = _calendar(services, definition, policy)
    if found is None or not automatic.current(found.view, step.state, step.visit):
        return step_batch.Attempted(
            definition, step, None, None, 0.0, None, (), policy, calendar, skipped=True
        )
    run = found.view
    limit = services.settings.step_lease
    if policy.timeout is not None:
        limit = min(limit, policy.timeout.total_seconds())
    loaded = slots.get(run.id, [])
    payload = (
        Decision(definition, run, loaded, now=step.due_at, actor=None, new_id=str).payloads()
        if loaded
        else {}
    )
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
        actor=actors.automation(step.id),
    )
    started = time.monotonic()
    value: Any = None
    error: BaseException | None = None
    watched = watchdog or guard.Watchdog()
    try:
        action = step_actions.resolve(step.action)
        with api.recording(_Recorder(services, run.id, step.key)):
            async with watched.within(limit):  # in this task: no task of its own per action
                value = await guard.contained(step_actions.invoke(action, ctx))
        guard.check_result(value, services.settings.max_document_bytes)  # kept on the run
    except guard.Escaped as exc:  # SystemExit, KeyboardInterrupt: the action's failure
        value, error = None, exc.error
    except Exception as exc:
        value, error = None, exc
    except asyncio.CancelledError as exc:
        if guard.stopping():
            raise  # the worker itself stops: the lease brings the step back
        value, error = None, exc  # raised by the action: a failure like any other
    finally:
        if watchdog is None:
            watched.close()
    return step_batch.Attempted(
        definition=definition,
        step=step,
        value=value,
        error=error,
        seconds=time.monotonic() - started,
        parts=_error_parts(error) if error is not None else None,
        classes=tuple(error_classes(error)) if error is not None else (),
        policy=policy,
        calendar=calendar,
        seen=found,
    )


def error_classes(error: BaseException) -> list[str]:
    """The names of the error's class and its bases (``on_error`` and policies match them)."""
    return [c.__name__ for c in type(error).__mro__ if c not in (object, BaseException)]


def _error_parts(error: BaseException) -> tuple[str, str, str]:
    cls = type(error).__name__
    message = guard.message(error)[:MESSAGE_CHARS] or cls
    trace = guard.storable("".join(traceback.format_exception(error, limit=-4)))[-TRACE_CHARS:]
    return cls, message, trace


def _calendar(services: Services, definition: Definition, policy: retries.Policy) -> Any:
    if policy.time != "business":
        return calendars.REAL_TIME
    name = policy.calendar or definition.calendar
    return services.calendars.get(name) if name else calendars.REAL_TIME
