"""Workspace rows, and a workspace's export (every row of every table it holds)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.store.common import db, sql
from taskflow.store.workspaces import schema

SQL = sql.statements("workspaces/workspaces")


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    status: str
    max_runs: int | None
    max_open_slots: int | None
    requests_per_minute: int | None
    created_at: datetime


async def create(
    conn: db.Connection, name: str, limits: tuple[int | None, int | None, int | None], now: datetime
) -> Workspace | None:
    """The new workspace; None when the name is taken."""
    row = await conn.fetchrow(SQL["create"], name, *limits, now)
    return db.record_as(Workspace, row) if row else None


async def every(conn: db.Connection) -> list[Workspace]:
    return [db.record_as(Workspace, r) for r in await conn.fetch(SQL["all"])]


async def get(conn: db.Connection, workspace: str, *, lock: bool = False) -> Workspace | None:
    """Workspace ``workspace`` (a uuid); ``lock``: its row locked for the transaction."""
    if lock:
        row = await conn.fetchrow(SQL["get_locked"], workspace)
    else:
        row = await conn.fetchrow(SQL["get"], workspace)
    return db.record_as(Workspace, row) if row else None


async def set_limits(
    conn: db.Connection,
    workspace: str,
    limits: tuple[int | None, int | None, int | None],
    now: datetime,
) -> Workspace | None:
    row = await conn.fetchrow(SQL["set_limits"], workspace, *limits, now)
    return db.record_as(Workspace, row) if row else None


async def set_status(
    conn: db.Connection, workspace: str, status: str, now: datetime
) -> Workspace | None:
    row = await conn.fetchrow(SQL["set_status"], workspace, status, now)
    return db.record_as(Workspace, row) if row else None


async def export(conn: db.Connection, workspace: str) -> dict[str, list[Any]]:
    """Every row workspace ``workspace`` holds, by table (JSON as PostgreSQL writes it).
    The table names are the schema's own (``schema.HELD``), never a caller's."""
    out: dict[str, list[Any]] = {}
    for table in schema.HELD:
        rows = await conn.fetch(
            f"SELECT to_jsonb(t) AS row FROM {table} t WHERE t.workspace = $1 ORDER BY 1::text",
            workspace,
        )
        out[table] = [r["row"] for r in rows]
    return out
