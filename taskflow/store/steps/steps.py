"""Automatic steps in PostgreSQL: step rows, their attempts, and what ``steps.once`` kept.

Statements by name from ``steps/steps.sql``. A step row is taken like a timer
(``FOR UPDATE SKIP LOCKED``) but in a transaction of its own that ends before the
action runs: while ``running``, ``due_at`` is the end of the taker's lease, so a
worker that dies leaves the step to be taken again then. Lock order: a step row is
locked only after its run (and the run's slots), see ``locks.py``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.runs.model import RunView
from taskflow.core.runs.statuses import StepStatus
from taskflow.core.steps import step_timers
from taskflow.store.clocks import deadlines
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs import runs as run_rows

SQL = with_columns(sql.statements("steps/steps"), view_columns=run_rows.view_columns("r_"))

# Run ids are passed as text where the column is a uuid: asyncpg parses them itself.

#: Step statuses (``core/runs/statuses.StepStatus``).
DUE, RUNNING, SUCCEEDED, FAILED, PARKED, CANCELLED = (
    StepStatus.DUE,
    StepStatus.RUNNING,
    StepStatus.SUCCEEDED,
    StepStatus.FAILED,
    StepStatus.PARKED,
    StepStatus.CANCELLED,
)


@dataclass(frozen=True)
class StepRow(step_timers.DueStep):
    """A step as a worker takes or locks it: the row as it was added, its id and attempts."""

    id: int
    attempts: int
    status: str = RUNNING
    workflow: str = ""
    definition_version: int = 0
    #: Attempts made before an operator last retried it (the policy counts the rest).
    counted_from: int = 0

    @property
    def attempt(self) -> int:
        """The attempt's number as the retry policy counts it (from 1)."""
        return self.attempts - self.counted_from


def _added(r: asyncpg.Record) -> dict[str, Any]:
    """What every read of a step row has: the fields it was added with, its id and attempts."""
    return {
        "key": r["key"],
        "run_id": str(r["run"]),
        "visit": r["visit"],
        "state": r["state"],
        "kind": r["kind"],
        "action": r["action"],
        "due_at": r["due_at"],
        "id": r["id"],
        "attempts": r["attempts"],
    }


def _row(r: asyncpg.Record) -> StepRow:
    """A taken step (no status column: running; its run's workflow and version) or a locked one."""
    return StepRow(
        **_added(r),
        status=r.get("status", RUNNING),
        workflow=r.get("workflow", ""),
        definition_version=r.get("definition_version", 0),
        counted_from=r["counted_from"],
    )


#: A step to enqueue (see ``enqueue_many`` in ``steps/steps.sql``).
NewStep = step_timers.DueStep


async def enqueue_many(conn: db.Connection, steps: Sequence[NewStep]) -> None:
    """Add many steps in one statement (keys that exist add nothing)."""
    if steps:
        await conn.execute(
            SQL["enqueue_many"],
            [s.key for s in steps],
            [uuid.UUID(s.run_id) for s in steps],
            [s.visit for s in steps],
            [s.state for s in steps],
            [s.kind for s in steps],
            [s.action for s in steps],
            [s.due_at for s in steps],
        )


async def cancel_left(
    conn: db.Connection, runs: Sequence[tuple[str, int, str]], now: datetime
) -> None:
    """Cancel the due steps of states these runs (id, visit, status as now written) left:
    a state's step row is written when it is entered, and dropped when it is left before
    a worker took it (the caller holds the runs' locks)."""
    if runs:
        await conn.execute(
            SQL["cancel_left"],
            [r for r, _, _ in runs],
            [v for _, v, _ in runs],
            [s for _, _, s in runs],
            now,
        )


@dataclass(frozen=True)
class Seen:
    """A run as a worker read it with its steps, and the stamp of the row versions read
    (``lock_runs`` reads it again only when the stamp moved)."""

    view: RunView
    stamp: str


def _seen(view: RunView, versions: str) -> Seen:
    """The run as the take read it, stamped as ``lock_runs_seen`` stamps it: the row versions
    and how many values ``steps.once`` recorded (one per name: those read with the run)."""
    return Seen(view, f"{versions}:{len(view.once)}")


@dataclass(frozen=True)
class Taken:
    """Steps a worker took, with their runs as they were (by id) and the runs that have
    any slot (the others have no payloads to read)."""

    steps: list[StepRow]
    runs: dict[str, Seen]
    with_slots: set[str]


async def take_batch(
    conn: db.Connection, now: datetime, limit: int, lease_seconds: float, worker: str
) -> Taken:
    """Start the next attempt of up to ``limit`` due steps under a lease (SKIP LOCKED), and
    read their runs in the same statement (one statement: no transaction needed)."""
    taken = Taken([], {}, set())
    for r in await conn.fetch(SQL["take"], now, limit, lease_seconds, worker):
        step = _row(r)
        taken.steps.append(step)
        taken.runs[step.run_id] = _seen(run_rows.view_from(r, "r_"), r["stamp"])
        if r["has_slots"]:
            taken.with_slots.add(step.run_id)
    return taken


async def take(
    conn: db.Connection, now: datetime, limit: int, lease_seconds: float, worker: str
) -> list[StepRow]:
    """Start the next attempt of up to ``limit`` due steps under a lease (SKIP LOCKED)."""
    return (await take_batch(conn, now, limit, lease_seconds, worker)).steps


async def lock(conn: db.Connection, step_id: int) -> StepRow | None:
    """The step, locked (its run locked first by the caller)."""
    found = await conn.fetchrow(SQL["lock"], step_id)
    return _row(found) if found else None


async def run_of(conn: db.Connection, step_id: int) -> str | None:
    """The id of the step's run (None: no such step)."""
    found = await conn.fetchval(SQL["run_of"], step_id)
    return str(found) if found is not None else None


async def reopen(conn: db.Connection, step_id: int, now: datetime) -> bool:
    """A parked step due again now, its attempts counted anew (False: it is not parked).

    The caller holds its run's lock; workers are woken at commit."""
    found = await conn.fetchrow(SQL["reopen"], step_id, now)
    if found is not None:
        await conn.execute(SQL["wake"], deadlines.CHANNEL)
    return found is not None


async def next_due(conn: db.Connection, now: datetime) -> datetime | None:
    """The nearest instant after ``now`` at which a step falls due."""
    found: datetime | None = await conn.fetchval(SQL["next_due"], now)
    return found


@dataclass(frozen=True)
class Attempt:
    """One attempt of a step, as recorded."""

    attempt: int
    worker: str | None
    started_at: datetime
    finished_at: datetime | None
    outcome: str
    duration_ms: int | None
    error_class: str | None
    error_message: str | None
    traceback: str | None


@dataclass(frozen=True)
class StepRecord(step_timers.DueStep):
    """A step with every attempt (what ``Run.steps`` shows)."""

    id: int
    attempts: int
    status: str
    result: Any
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    attempt_list: tuple[Attempt, ...] = field(default_factory=tuple)


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


async def of_runs(conn: db.Connection, run_ids: Sequence[str]) -> dict[str, list[StepRecord]]:
    """Every step of these runs with its attempts, newest step first, by run."""
    found = await conn.fetch(SQL["of_runs"], [uuid.UUID(r) for r in run_ids])
    by_run: dict[str, list[StepRecord]] = {r: [] for r in run_ids}
    for r in found:
        attempts = tuple(
            Attempt(
                attempt=a["attempt"],
                worker=a["worker"],
                started_at=_when(a["started_at"]) or r["created_at"],
                finished_at=_when(a["finished_at"]),
                outcome=a["outcome"],
                duration_ms=a["duration_ms"],
                error_class=a["error_class"],
                error_message=a["error_message"],
                traceback=a["traceback"],
            )
            for a in r["attempt_list"]
        )
        record = StepRecord(
            **_added(r),
            status=r["status"],
            result=r["result"],
            last_error=r["last_error"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            ended_at=r["ended_at"],
            attempt_list=attempts,
        )
        by_run.setdefault(record.run_id, []).append(record)
    return by_run


async def once_get(conn: db.Connection, run_id: str, name: str) -> tuple[bool, Any]:
    """(found, value) of what ``steps.once`` recorded as ``name`` for the run."""
    found = await conn.fetchrow(SQL["once_get"], run_id, name)
    return (True, found["result"]) if found else (False, None)


async def once_put(
    conn: db.Connection, run_id: str, name: str, value: Any, now: datetime
) -> tuple[Any, bool]:
    """Record ``value`` unless recorded already: (the kept value, True if this one)."""
    found = await conn.fetchrow(SQL["once_put"], run_id, name, value, now)
    if found is None:  # a concurrent recording committed after this statement's snapshot
        _, kept = await once_get(conn, run_id, name)
        return kept, False
    return found["result"], bool(found["fresh"])


async def once_many(
    conn: db.Connection, values: Sequence[tuple[str, str, Any]], now: datetime
) -> None:
    """Record what ``steps.once`` returned in hooks: (run, name, value) each, at ``now``.

    A name another transaction recorded first (after this one read the run) means the
    decision used a value that is not the run's: it lost a race, and is rolled back and
    decided again (``service/common/retry.py``), reading the recorded value then.
    """
    if not values:
        return
    fresh = await conn.fetchval(
        SQL["once_many"],
        [r for r, _, _ in values],
        [name for _, name, _ in values],
        [json.dumps(value) for _, _, value in values],
        now,
    )
    if fresh != len(values):
        raise asyncpg.SerializationError(
            "steps.once: a value was recorded by another transaction first; decide again"
        )


# -- a batch of finished attempts ----------------------------------------------------------------


async def lock_runs(
    conn: db.Connection, run_ids: Sequence[str], seen: Mapping[str, Seen] | None = None
) -> dict[str, RunView]:
    """Lock these runs in id order (the lock order's first step, for a batch of steps), by
    id as they are now: a run ``seen`` (read by the take) whose rows did not change since
    is that view, the others are read again (under the lock just taken)."""
    if not seen:
        found = await conn.fetch(SQL["lock_runs"], list(run_ids))
        return {str(r["r_id"]): run_rows.view_from(r, "r_") for r in found}
    views: dict[str, RunView] = {}
    moved = []
    for r in await conn.fetch(SQL["lock_runs_seen"], list(run_ids)):
        run_id = str(r["id"])
        known = seen.get(run_id)
        if known is not None and known.stamp == r["stamp"]:
            views[run_id] = known.view
        else:
            moved.append(run_id)
    if moved:
        views.update(await lock_runs(conn, moved))
    return {run_id: views[run_id] for run_id in sorted(views)}


async def lock_many(conn: db.Connection, step_ids: Sequence[int]) -> dict[int, tuple[str, int]]:
    """These steps, locked in id order (after their runs and live slots): (status, attempts)
    by id."""
    found = await conn.fetch(SQL["lock_many"], sorted(step_ids))
    return {r["id"]: (r["status"], r["attempts"]) for r in found}


@dataclass(frozen=True)
class Finished:
    """How one attempt ended and what its step becomes (see ``finish_many``)."""

    step_id: int
    attempt: int
    outcome: str
    duration_ms: int
    error: tuple[str, str, str] | None
    status: str | None  # None: the step row is left as it is
    due_at: datetime | None = None
    result: Any = None
    last_error: str | None = None


async def finish_many(
    conn: db.Connection,
    finished: Sequence[Finished],
    results: Sequence[tuple[str, str, Any]],
    now: datetime,
) -> None:
    """Record a batch of attempts, settle their steps and keep automatic states' results on
    their runs ((run, state, result) each): one statement."""
    if not finished and not results:
        return
    errors = [f.error or (None, None, None) for f in finished]
    settled = [f for f in finished if f.status is not None]
    await conn.execute(
        SQL["finish_many"],
        *db.columns(finished, "step_id", "attempt", "outcome", "duration_ms"),
        *([e[i] for e in errors] for i in range(3)),
        now,
        *db.columns(settled, "step_id", "status", "due_at"),
        [json.dumps(f.result) if f.result is not None else None for f in settled],
        [f.last_error for f in settled],
        [r for r, _, _ in results],
        [state for _, state, _ in results],
        [json.dumps(value) for _, _, value in results],
    )


async def release(conn: db.Connection, steps: list[StepRow], now: datetime) -> None:
    """Hand back ``steps`` this worker still runs (their attempt unchanged): due at ``now``."""
    await conn.execute(SQL["release"], [s.id for s in steps], [s.attempts for s in steps], now)
