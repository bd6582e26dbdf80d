"""The timeline (``audit_event``) partitioned by month: the migration's steps and the
function making month partitions ahead (``history/partitions.sql``, docs/scaling.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

import asyncpg

from taskflow.store.common import db, sql

#: The statements of ``history/partitions.sql``.
SQL = sql.statements("history/partitions")

#: Migration 2026-12-04T19:00, in order (each idempotent; not one transaction).
MIGRATION_STEPS: Final = (SQL["prepare"], SQL["validate"], SQL["id_at_index"], SQL["swap"])
#: Whether the timeline is still a plain table: the concurrent index is built only then
#: (on a partitioned table PostgreSQL refuses CONCURRENTLY, whatever IF NOT EXISTS says).
NOT_YET_PARTITIONED: Final = (
    "SELECT relkind = 'r' AS plain FROM pg_class WHERE oid = 'audit_event'::regclass"
)
FUNCTION: Final = ("timeline_partitions", SQL["partitions_function"])
#: A partition walled as its parent (the workspace policy): timeline_partitions() calls it.
WALLS: Final = ("timeline_partition_walls", SQL["walls_function"])

#: The parent as the schema declares it (``schema_extras``): the primary key holds the
#: partition key; partitions are the migration's and the worker's (the schema test compares
#: parents).
TABLE: Final = (
    "audit_event",
    'CREATE TABLE "audit_event" ("id" BIGSERIAL NOT NULL, "run" UUID NOT NULL '
    'REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, '
    '"slot" UUID DEFAULT null, "kind" VARCHAR(60) NOT NULL DEFAULT \'\', '
    '"actor" VARCHAR(200) DEFAULT null, "reason" TEXT DEFAULT null, '
    "\"details\" JSONB NOT NULL DEFAULT '{}', "
    '"at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    "CONSTRAINT audit_event_pkey PRIMARY KEY (id, at)) PARTITION BY RANGE (at)",
)

#: Months made ahead of the current one.
AHEAD = 2


async def make_ahead(conn: db.Connection, now: datetime, ahead: int = AHEAD) -> int:
    """Make the month partitions of ``now``'s month and ``ahead`` after it; how many were new."""
    return int(await conn.fetchval("SELECT timeline_partitions($1, $2)", now, ahead))


#: A partition's name as the migration and ``timeline_partitions()`` make them (checked
#: before a name goes into DROP TABLE, which takes no parameter).
_PARTITION = re.compile(r"^audit_event_(before|p\d{4}_\d{2})$")


async def drop_past(
    conn: db.Connection, cutoffs: Mapping[str, datetime], *, lock_timeout_ms: int = 2000
) -> list[str]:
    """Drop the month partitions whose every line belongs to a run retention takes at
    ``cutoffs`` (workflow -> runs ended before it go); the names dropped, oldest first.

    One transaction per partition: it is locked, checked again and dropped. A drop waits
    at most ``lock_timeout_ms`` for the timeline's lock (writers queue behind a waiting
    ``DROP``), and a month that could not be locked is left for the next pass.
    """
    if not cutoffs:
        return []
    workflows, befores = list(cutoffs), list(cutoffs.values())
    dropped: list[str] = []
    # Every month is looked at: an old one holding a line of a run kept longer (a live
    # run started long ago) does not hold back the newer ones.
    for month in await conn.fetch(SQL["months"], max(befores)):
        name = month["name"]
        if not _PARTITION.match(name):
            continue
        lower = month["lower_at"] or datetime.min.replace(tzinfo=UTC)
        try:
            async with conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}")
                # Every workspace's lines: a month is judged on all of them (row-level
                # security would hide the other workspaces' and drop their history).
                await conn.execute("SET LOCAL taskflow.workspace = '*'")
                await conn.execute(f'LOCK TABLE "{name}" IN ACCESS EXCLUSIVE MODE')
                kept = await conn.fetchval(
                    SQL["kept_line"], lower, month["upper_at"], workflows, befores
                )
                if not kept:
                    await conn.execute(f'DROP TABLE "{name}"')
        except asyncpg.LockNotAvailableError:
            continue
        if not kept:
            dropped.append(name)
    return dropped
