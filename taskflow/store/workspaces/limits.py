"""A workspace's limits checked where they bind (docs/workspaces.md, "Limits"): its row locked,
then the figure counted (see limits.sql for why in two statements)."""

from __future__ import annotations

import uuid
from datetime import datetime

from taskflow.store.common import db, sql

SQL = sql.statements("workspaces/limits")


async def runs(conn: db.Connection, subject_id: str) -> tuple[int, int] | None:
    """(allowed, live runs now) of subject ``subject_id``'s workspace, its row locked for
    the transaction; None when it has no run limit."""
    row = await conn.fetchrow(SQL["lock_run_limit"], subject_id)
    if row is None:
        return None
    return int(row["allowed"]), int(await conn.fetchval(SQL["live_runs"], row["id"]))


async def open_slots(conn: db.Connection, run_id: str) -> tuple[int, int] | None:
    """(allowed, open slots now) of run ``run_id``'s workspace, its row locked; None when
    it has no open-slot limit."""
    row = await conn.fetchrow(SQL["lock_slot_limit"], run_id)
    if row is None:
        return None
    return int(row["allowed"]), int(await conn.fetchval(SQL["open_slots"], row["id"]))


async def requests_per_minute(conn: db.Connection, workspace: str) -> int | None:
    found = await conn.fetchval(SQL["requests_per_minute"], workspace)
    return None if found is None else int(found)


#: Requests counted per workspace and minute (migration 2026-12-05T01:40): a counter of the
#: service, keyed by the workspace's id as the workspace table itself is, and counted
#: before a request enters its workspace (so not behind the row-level security wall).
TABLE = (
    "workspace_request_minute",
    "CREATE TABLE workspace_request_minute ("
    " workspace_id uuid NOT NULL REFERENCES workspace (id) ON DELETE CASCADE,"
    " minute timestamptz NOT NULL,"
    " requests integer NOT NULL,"
    " PRIMARY KEY (workspace_id, minute))",
)


async def count_request(
    conn: db.Connection, workspace: str, minute: datetime, allowed: int
) -> int | None:
    """Count one request of ``workspace`` in ``minute`` unless it has ``allowed`` already:
    the minute's count after, or None (refused, not counted). Shared by every process."""
    if allowed <= 0:
        return None
    found = await conn.fetchval(SQL["count_request"], uuid.UUID(workspace), minute, allowed)
    return None if found is None else int(found)
