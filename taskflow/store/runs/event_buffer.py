"""Events kept for a run until a slot waits for them (table ``event_buffer``).

Every statement reads by run (index ``event_buffer_run``) or by expiry
(``event_buffer_expires_at``). Writers hold
the run's row lock, so the rows of one run are never written by two
transactions at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.store.common import db, sql


@dataclass(frozen=True)
class Buffered:
    """One kept event, in arrival order (``id``)."""

    id: int
    run_id: str
    event: str
    payload: Mapping[str, Any]
    slot_name: str | None
    item: Any
    actor: str
    arrived_at: datetime
    expires_at: datetime


#: The statements of ``runs/event_buffer.sql``.
SQL = sql.statements("runs/event_buffer")

#: A run's kept events in arrival order (index ``event_buffer_run``).
OF_RUN = SQL["of_run"]


def _row(row: Mapping[str, Any]) -> Buffered:
    # The pool's codec decodes JSON (see db.py).
    return db.record_as(Buffered, row, columns=db.REFERENCES, payload=row["payload"] or {})


async def of_run(conn: db.Connection, run_id: str) -> list[Buffered]:
    """The run's kept events, oldest first."""
    rows = await conn.fetch(OF_RUN, uuid.UUID(run_id))
    return [_row(r) for r in rows]


async def insert(
    conn: db.Connection,
    *,
    run_id: str,
    event: str,
    payload: Mapping[str, Any],
    slot_name: str | None,
    item: Any,
    actor: str,
    arrived_at: datetime,
    expires_at: datetime,
) -> Buffered:
    """Keep an event; returns it with its id (its place in arrival order)."""
    row = await conn.fetchrow(
        SQL["insert"],
        uuid.UUID(run_id),
        event,
        dict(payload),
        slot_name,
        item,
        actor,
        arrived_at,
        expires_at,
    )
    assert row is not None
    return _row(row)


#: Runs with kept events past their time (index ``event_buffer_expires_at``).
EXPIRED_RUNS = SQL["expired_runs"]


async def runs_with_expired(conn: db.Connection, now: datetime, limit: int) -> list[str]:
    """Up to ``limit`` runs that keep an event past its time."""
    return [str(r["run"]) for r in await conn.fetch(EXPIRED_RUNS, now, limit)]


async def lock_runs(conn: db.Connection, run_ids: list[str]) -> list[str]:
    """Lock these runs' rows in id order (the lock order), skipping those locked elsewhere."""
    rows = await conn.fetch(
        SQL["lock_runs"],
        [uuid.UUID(r) for r in run_ids],
    )
    return [str(r["id"]) for r in rows]


async def delete(conn: db.Connection, buffered_id: int) -> None:
    await conn.execute(SQL["delete"], buffered_id)
