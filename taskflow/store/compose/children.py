"""The ``run_child`` rows (docs/composition.md): written with the decision that enters a
state with children, taken by the worker, read by the API. Statements: ``children.sql``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow.core.compose import compose
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns

#: A step's compensation row as cancel_left and undo_late insert it (``rc`` the step's row;
#: the instants follow): keyed '<step key>:undo', its compensation workflow, attempt 1.
UNDO_ROW = """INSERT INTO run_child (key, parent, visit, state, label, workflow, awaited, status,
                           subject, created_at, updated_at)
    SELECT rc.key || ':undo', rc.parent, rc.visit, rc.state, rc.label,
           rc.subject->>'compensation', false, 'starting',
           (rc.subject - 'compensation')
             || jsonb_build_object('compensates', rc.label, 'step_run', rc.child, 'attempt', 1),"""

SQL = with_columns(sql.statements("compose/children"), undo_row=UNDO_ROW)


@dataclass(frozen=True)
class ChildRow:
    """One child of a parent run, as stored."""

    id: int
    key: str
    parent: str
    child: str | None
    visit: int
    state: str
    label: str
    workflow: str
    awaited: bool
    status: str
    created_at: datetime
    updated_at: datetime
    subject: Mapping[str, Any] = field(default_factory=dict)
    outcome: Mapping[str, Any] | None = None


def _row(record: Any) -> ChildRow:
    return db.record_as(ChildRow, record)


async def enqueue_many(
    conn: db.Connection, children: Sequence[compose.DueChild], now: datetime
) -> None:
    """Add the rows of children to start (keys that exist add nothing)."""
    if children:
        await conn.execute(
            SQL["enqueue_many"],
            [c.key for c in children],
            [uuid.UUID(c.parent) for c in children],
            [c.visit for c in children],
            [c.state for c in children],
            [c.label for c in children],
            [c.workflow for c in children],
            [c.awaited for c in children],
            [json.dumps(dict(c.subject)) for c in children],
            now,
        )


async def cancel_left(
    conn: db.Connection, runs: Sequence[tuple[str, int, str]], now: datetime
) -> None:
    """Mark the awaited children of the visits these runs (id, visit, status as now written)
    left for the worker to cancel, and drop those not started (the caller holds the runs)."""
    if runs:
        await conn.execute(
            SQL["cancel_left"],
            [uuid.UUID(r) for r, _, _ in runs],
            [v for _, v, _ in runs],
            [s for _, _, s in runs],
            now,
        )


async def rename(
    conn: db.Connection, run_id: str, visit: int, state: str, labels: Mapping[str, str]
) -> None:
    """A migrated run stays: its children of this visit follow the state's and labels' names."""
    await conn.execute(
        SQL["rename"], uuid.UUID(run_id), visit, state, list(labels), list(labels.values())
    )


@dataclass(frozen=True)
class Due:
    """A row a worker has to act on: its id, parent run, status and the parent's workspace."""

    id: int
    parent: str
    status: str
    workspace: str


async def due(conn: db.Connection, limit: int, now: datetime, *, starts: bool = True) -> list[Due]:
    """Up to ``limit`` rows a worker has to act on at ``now``, ends and cancels first
    (``starts``: rows to start too, else only ends and cancels)."""
    found = await conn.fetch(SQL["due"], limit, now, starts)
    return [Due(r["id"], str(r["parent"]), r["status"], str(r["workspace"])) for r in found]


async def lock_many(conn: db.Connection, row_ids: Sequence[int]) -> list[ChildRow]:
    """The rows, locked, in the order given (the caller holds their parent's run first)."""
    found = {r["id"]: _row(r) for r in await conn.fetch(SQL["lock_many"], list(row_ids))}
    return [found[i] for i in row_ids if i in found]


async def lock_due_of(
    conn: db.Connection, parents: Sequence[str], limit: int, now: datetime, *, starts: bool = True
) -> list[ChildRow]:
    """Up to ``limit`` rows of ``parents`` due at ``now`` (ends and cancels first; ``starts``:
    rows to start too), locked (the caller holds the parents' runs first)."""
    keys = [uuid.UUID(p) for p in parents]
    found = await conn.fetch(SQL["lock_due_of"], keys, limit, now, starts)
    return [_row(r) for r in found]


async def started(conn: db.Connection, started: Sequence[tuple[int, str]], now: datetime) -> None:
    """The rows' child runs started: (row id, child run id) each (one statement)."""
    if started:
        await conn.execute(
            SQL["started_many"], [i for i, _ in started], [uuid.UUID(c) for _, c in started], now
        )


async def settled(
    conn: db.Connection, row_id: int, outcome: Mapping[str, Any] | None, now: datetime
) -> None:
    """The row is done with, keeping ``outcome`` (None: the one it has)."""
    await conn.execute(
        SQL["settled"], row_id, json.dumps(dict(outcome)) if outcome is not None else None, now
    )


async def undo_late(conn: db.Connection, row_id: int, now: datetime) -> bool:
    """Plan the compensation of saga step ``row_id`` that completed after its parent left
    its visit; False when it was planned already (or the row is no saga step)."""
    return bool(await conn.fetch(SQL["undo_late"], row_id, now))


async def settled_many(
    conn: db.Connection, settled: Sequence[tuple[int, Mapping[str, Any]]], now: datetime
) -> None:
    """:func:`settled` for many rows, each with the outcome its parent read (one statement)."""
    await conn.execute(
        SQL["settled_many"],
        [i for i, _ in settled],
        [json.dumps(dict(o)) for _, o in settled],
        now,
    )


async def again(
    conn: db.Connection,
    row_id: int,
    attempt: int,
    now: datetime,
    not_before: datetime | None = None,
) -> None:
    """Start the failed compensation of row ``row_id`` again (its attempt ``attempt``), at
    ``not_before`` (None: at once)."""
    await conn.execute(SQL["again"], row_id, now, attempt, not_before)


async def failed_compensation(conn: db.Connection, run_id: str, step: str) -> ChildRow | None:
    """The unresolved compensation of ``step`` that failed its last attempt, locked (the
    caller holds the run first)."""
    found = await conn.fetchrow(SQL["failed_compensation"], uuid.UUID(run_id), step)
    return None if found is None else _row(found)


async def resolve(
    conn: db.Connection, row_id: int, resolution: str, by: str, now: datetime
) -> None:
    """Mark the failed compensation row resolved (``redo`` or ``clear``) by ``by``."""
    await conn.execute(SQL["resolve"], row_id, resolution, by, now)


async def of_parents(conn: db.Connection, parents: Sequence[str]) -> list[ChildRow]:
    """The children of these runs, in the order they were made."""
    rows = await conn.fetch(SQL["of_parents"], [uuid.UUID(p) for p in parents])
    return [_row(r) for r in rows]


async def parents_of(conn: db.Connection, children: Sequence[str]) -> list[ChildRow]:
    """The rows that name these runs as children."""
    rows = await conn.fetch(SQL["parents_of"], [uuid.UUID(c) for c in children])
    return [_row(r) for r in rows]


async def detach(conn: db.Connection, child: str, now: datetime) -> tuple[str, str] | None:
    """Cut the running child loose: (parent id, label), or None when it has no live parent."""
    found = await conn.fetchrow(SQL["detach"], uuid.UUID(child), now)
    return None if found is None else (str(found["parent"]), found["label"])


async def cancel_reason(conn: db.Connection, run_id: str) -> str | None:
    """Why the run was cancelled (its last ``run.cancelled`` line), if it was."""
    value = await conn.fetchval(SQL["cancel_reason"], uuid.UUID(run_id))
    return None if value is None else str(value)


async def in_flight(conn: db.Connection) -> int:
    """How many children are started or to start and not settled."""
    return int(await conn.fetchval(SQL["in_flight"]))


async def compensations(conn: db.Connection) -> dict[str, int]:
    """How many compensations are running, done and failed (every outcome present)."""
    found = {"running": 0, "done": 0, "failed": 0}
    for record in await conn.fetch(SQL["compensations"]):
        found[record["outcome"]] = int(record["n"])
    return found


#: The trigger that notes a run's end on its child rows (``schema_extras``, the migration).
FUNCTION = ("run_child_on_end", SQL["on_end_function"])
TRIGGER = ("run_child_on_end", SQL["on_end_trigger"])
