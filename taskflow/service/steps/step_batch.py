"""Finishing a worker's batch of attempts in one transaction, as the timer batch fires timers.

``service/steps/steps.py`` runs a batch of actions, then hands their outcomes here.
One transaction takes the lock order for the whole batch (the runs in id order,
their live slots, then the step rows), loads the runs' slots, clocks and timers
at once (``service/clocks/timer_batch.py``), lets each outcome decide with the pure
functions of :mod:`taskflow.core.steps.automatic`, plans each decision with the
unit of work's planner (``timer_batch.outcome`` calls ``core/common/unit_of_work.plan``,
as use cases do) and writes the batch through the one writer. An outcome whose
decision raises changes nothing of its run: its step is parked with the error.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition import actors, retries
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import AuditEntry, Outcome
from taskflow.core.steps import automatic
from taskflow.service.clocks import deadlines as clock_service
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.service.runs import buffered, ids, persist
from taskflow.service.steps import step_queue
from taskflow.store.common import locks
from taskflow.store.steps import steps as store

log = logging.getLogger("taskflow.worker")


@dataclass(frozen=True)
class Attempted:
    """One attempt run by this worker: its step as taken, and how the action ended."""

    definition: Definition
    step: store.StepRow
    value: Any
    error: BaseException | None
    seconds: float
    #: class, message and short traceback of ``error``
    parts: tuple[str, str, str] | None
    classes: tuple[str, ...]
    policy: retries.Policy
    calendar: Any
    #: Not run: the run had left the step's state when it was taken.
    skipped: bool = False
    #: The run as the take read it (the finish reuses it when the run did not change).
    seen: store.Seen | None = None


@dataclass
class _Batch:
    finished: list[store.Finished]
    results: list[tuple[str, str, Any]]
    outcomes: dict[int, str]
    #: Runs a plain success completed (the state left had no other step row: the writer
    #: need not look for due ones to cancel), and runs something else decided for.
    plain: set[str] = field(default_factory=set)
    decided: set[str] = field(default_factory=set)


def _details(step: store.StepRow, ms: int, **more: Any) -> dict[str, Any]:
    return {
        "step": step.key,
        "step_kind": step.kind,
        "action": step.action,
        "attempt": step.attempts,
        "duration_ms": ms,
        **more,
    }


async def finish(services: Services, attempted: Sequence[Attempted]) -> dict[int, str]:
    """Finish these attempts in one transaction; the outcome label by step id.

    An outcome whose decision raises (a hook failed, a cycle of states) changes nothing
    of its run: its step is parked with that error for an operator, the others go on.
    """
    async with services.db.transaction() as conn:
        run_ids = sorted({a.step.run_id for a in attempted})
        seen = {a.step.run_id: a.seen for a in attempted if a.seen is not None}
        found = await store.lock_runs(conn, run_ids, seen)
        await locks.lock_live_slots(conn, run_ids)
        locked = await store.lock_many(conn, [a.step.id for a in attempted])
        states = await runs_batch.load_views(conn, found)
        # The batch's one instant, read once its locks are held and its runs loaded (as a
        # use case reads it once its run's lock is held): what it decides happens now, not
        # when the batch began waiting for its locks (a child's end, its parent's resume).
        now = services.clock.now()
        batch = _Batch([], [], {})
        for item in attempted:
            state = states.get(item.step.run_id)
            trial = state.copy() if state is not None else None
            mark = len(batch.finished), len(batch.results)
            try:
                _one(services, batch, item, locked.get(item.step.id), trial, now)
            except Exception as exc:
                assert state is not None  # a missing run decides nothing
                del batch.finished[mark[0] :], batch.results[mark[1] :]
                _undecidable(batch, item, state, exc, now)
                continue
            if trial is not None and state is not None:
                states[item.step.run_id] = trial
        await runs_batch.flush(conn, list(states.values()), now, quiet=batch.plain - batch.decided)
        await store.finish_many(conn, batch.finished, batch.results, now)
        # Slots the outcomes opened take the events their runs kept (same transaction).
        await buffered.after_batch(
            conn, services, [s.run for s in states.values()], now, persist.write
        )
        # Slots the outcomes opened on a chain asking the team count on the team's calendar.
        await clock_service.opened_by_batch(
            services, conn, [(s.run, s.slots.values()) for s in states.values()], now
        )
    return batch.outcomes


def _undecidable(
    batch: _Batch, item: Attempted, state: runs_batch.RunState, exc: Exception, now: datetime
) -> None:
    """The outcome could not be decided: park the step with the reason, change nothing else."""
    log.error("step %s: its outcome could not be decided", item.step.key, exc_info=exc)
    step = item.step
    text = f"{type(exc).__name__}: {exc}"[:1000]
    line = f"{step.state}: what follows the action could not be decided ({text})"
    details = _details(step, round(item.seconds * 1000), error=text)
    state.log(AuditEntry("step.parked", now, None, None, line, details))
    batch.finished.append(
        store.Finished(
            step.id,
            step.attempts,
            "failed",
            round(item.seconds * 1000),
            item.parts,
            store.PARKED,
            last_error=text,
        )
    )
    batch.outcomes[step.id] = "parked"


def _one(
    services: Services,
    batch: _Batch,
    item: Attempted,
    row: tuple[str, int] | None,
    state: runs_batch.RunState | None,
    now: datetime,
) -> None:
    step, definition = item.step, item.definition
    ms = round(item.seconds * 1000)

    def done(label: str, status: str | None, **settle: Any) -> None:
        """``label`` for the metric; the attempt's own outcome is how the action ended."""
        ended = "discarded" if label == "discarded" else "failed" if item.error else "succeeded"
        batch.finished.append(
            store.Finished(step.id, step.attempts, ended, ms, item.parts, status, **settle)
        )
        batch.outcomes[step.id] = label

    if row is None or row != (store.RUNNING, step.attempts):
        done("discarded", None)  # its lease ran out and another worker took it
        return
    if item.skipped or state is None or not automatic.current(state.run, step.state, step.visit):
        done("discarded", store.CANCELLED)  # the run left the state: nothing follows
        return
    slots = list(state.slots.values())
    ctx = uow.context(definition, services.calendars, slots, at_risk=services.settings.sla_at_risk)
    if item.error is None:
        details = _details(step, ms, result=item.value)
        if step.kind != step_queue.ACTION:
            line = f"{step.state}: {step.action} succeeded"
            state.log(AuditEntry("step.succeeded", now, None, None, line, details))
            if step.kind == step_queue.ENTRY:  # kept for later conditions, the run stays
                batch.results.append((step.run_id, step.state, item.value))
                state.run = replace(
                    state.run, results={**state.run.results, step.state: item.value}
                )
        else:  # the run is written with its result by the unit of work
            plain = automatic.succeeded_plainly(
                definition,
                state.run,
                touched=bool(state.slots or state.timers),
                result=item.value,
                details=details,
                now=now,
                actor=actors.automation(step.id),
            )
            if plain is not None:  # no engine working copy needed: plan it as it is
                runs_batch.outcome(state, plain, ctx, now)
                batch.plain.add(step.run_id)
            else:
                batch.decided.add(step.run_id)
                _decide(
                    state, ctx, now, step, automatic.succeeded, result=item.value, details=details
                )
        done("succeeded", store.SUCCEEDED, result=item.value)
        return
    assert item.parts is not None
    text = f"{item.parts[0]}: {item.parts[1]}"
    details = _details(step, ms, error=text, error_class=item.parts[0])
    next_at = retries.next_attempt_at(
        item.policy, step.attempt, now, item.calendar, random.random(), item.classes
    )
    if next_at is not None:
        line = (
            f"{step.state}: attempt {step.attempt} failed ({text}); next attempt at "
            f"{next_at.isoformat()}"
        )
        details["next_at"] = next_at.isoformat()
        state.log(AuditEntry("step.retrying", now, None, None, line, details))
        done("retrying", store.DUE, due_at=next_at, last_error=text)
        return
    routed = step.kind == step_queue.ACTION and (
        automatic.error_route(definition, step.state, item.classes) is not None
    )
    if step.kind == step_queue.ACTION:
        batch.decided.add(step.run_id)
        _decide(
            state, ctx, now, step, automatic.failed, error_classes=item.classes, details=details
        )
    else:
        line = f"{step.state}: {step.action} failed ({text}); an operator retries it (retryStep)"
        state.log(AuditEntry("step.parked", now, None, None, line, details))
    if routed:
        done("failed", store.FAILED, last_error=text)
    else:
        done("parked", store.PARKED, last_error=text)


def _decide(
    state: runs_batch.RunState,
    ctx: uow.Context,
    now: datetime,
    step: store.StepRow,
    decide: Callable[..., Outcome],
    **how: Any,
) -> None:
    """Decide what ``step``'s outcome does with ``decide`` (``automatic.succeeded`` or
    ``automatic.failed``; the step acts: ``automation:<step id>``) on the run's batch state,
    and plan it (the unit of work's planner)."""
    slots = list(state.slots.values())
    by = actors.automation(step.id)
    result = decide(ctx.definition, state.run, slots, now=now, new_id=ids.new_id, actor=by, **how)
    runs_batch.outcome(state, result, ctx, now)
