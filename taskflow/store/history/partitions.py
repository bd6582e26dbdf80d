"""The timeline (``audit_event``) partitioned by month: the migration's steps and the
function making month partitions ahead (``history/partitions.sql``, docs/scaling.md)."""

from __future__ import annotations

from typing import Final

from taskflow.store.common import db, sql

#: The statements of ``history/partitions.sql``.
SQL = sql.statements("history/partitions")

#: Migration 2026-12-04T19:00, in order (each idempotent; not one transaction).
MIGRATION_STEPS: Final = (SQL["prepare"], SQL["validate"], SQL["id_at_index"], SQL["swap"])
FUNCTION: Final = ("timeline_partitions", SQL["partitions_function"])

#: Months made ahead of the current one.
AHEAD = 2


async def make_ahead(conn: db.Connection, now: object, ahead: int = AHEAD) -> int:
    """Make the month partitions of ``now``'s month and ``ahead`` after it; how many were new."""
    return int(await conn.fetchval("SELECT timeline_partitions($1, $2)", now, ahead))
