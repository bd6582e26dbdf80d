"""History partitioned by month (``history/partitions.sql``, docs/scaling.md): the timeline
(``audit_event``, on ``at``) and the runs' stays in their states (``state_span``, on
``left_at``: a closed span lies in the month it ended, the standing ones in a partition of
their own), the migrations' steps, the month partitions made ahead and retention's drop of
whole months."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
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
#: Month partitions of a table partitioned by month, made where missing.
MONTHS_FUNCTION: Final = ("month_partitions", SQL["month_partitions_function"])
#: A partition walled as its parent (the workspace policy): month_partitions() calls it.
PARTITION_WALLS: Final = ("partition_walls", SQL["partition_walls_function"])
#: The timeline's own names for both (wrappers since migration 2026-12-05T02:00).
FUNCTION: Final = ("timeline_partitions", SQL["partitions_function"])
WALLS: Final = ("timeline_partition_walls", SQL["walls_function"])

#: Migration 2026-12-05T02:00 (state spans), in order (each idempotent; not one transaction).
SPAN_MIGRATION_STEPS: Final = (
    SQL["span_prepare"],
    SQL["span_validate"],
    SQL["span_key_index"],
    SQL["span_standing_index"],
    SQL["span_swap"],
)
SPANS_NOT_YET_PARTITIONED: Final = (
    "SELECT relkind = 'r' AS plain FROM pg_class WHERE oid = 'state_span'::regclass"
)

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

#: The state spans' parent as the schema declares it; its one-standing-span rule is the
#: unique index ``state_span_open (run, left_at)`` over standing spans (``schema_extras``).
SPANS_TABLE: Final = (
    "state_span",
    'CREATE TABLE "state_span" ("id" BIGSERIAL NOT NULL, "run" UUID NOT NULL '
    'REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, '
    "\"workflow\" VARCHAR(100) NOT NULL DEFAULT '', \"state\" VARCHAR(100) NOT NULL DEFAULT '', "
    '"entered_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"left_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
    '"line" BIGINT NOT NULL DEFAULT 0, "undone_by" BIGINT DEFAULT null, '
    "CONSTRAINT state_span_pkey PRIMARY KEY (id, left_at)) PARTITION BY RANGE (left_at)",
)

#: Months made ahead of the current one.
AHEAD = 2


@dataclass(frozen=True)
class Monthly:
    """A table partitioned by month on ``key``: its partitions are ``<parent>_pYYYY_MM``,
    ``<parent>_before`` (the table as it was at its migration) and ``<parent>_default``."""

    parent: str
    key: str

    @property
    def partition(self) -> re.Pattern[str]:
        """A month's or the first partition's name (checked before a name goes into DROP
        TABLE, which takes no parameter)."""
        return re.compile(rf"^{self.parent}_(before|p\d{{4}}_\d{{2}})$")


TIMELINE: Final = Monthly("audit_event", "at")
SPANS: Final = Monthly("state_span", "left_at")
MONTHLY: Final = (TIMELINE, SPANS)


async def make_ahead(conn: db.Connection, now: datetime, ahead: int = AHEAD) -> int:
    """Make the month partitions of ``now``'s month and ``ahead`` after it, of every table
    partitioned by month; how many were new."""
    made = 0
    for table in MONTHLY:
        made += int(
            await conn.fetchval(
                "SELECT month_partitions($1, $2, $3, $4)", table.parent, table.key, now, ahead
            )
        )
    return made


async def drop_past(
    conn: db.Connection, cutoffs: Mapping[str, datetime], *, lock_timeout_ms: int = 2000
) -> list[str]:
    """Drop the month partitions of every table partitioned by month whose every row
    belongs to a run retention takes at ``cutoffs`` (workflow -> runs ended before it go);
    the names dropped, oldest first per table."""
    dropped: list[str] = []
    for table in MONTHLY:
        dropped += await _drop_past(conn, table, cutoffs, lock_timeout_ms)
    return dropped


async def _drop_past(
    conn: db.Connection, table: Monthly, cutoffs: Mapping[str, datetime], lock_timeout_ms: int
) -> list[str]:
    """Drop ``table``'s month partitions whose every row belongs to a run retention takes.

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
    kept_row = SQL["kept_row"].replace("{parent}", table.parent).replace("{key}", table.key)
    for month in await conn.fetch(SQL["months"], max(befores), table.parent):
        name = month["name"]
        if not table.partition.match(name):
            continue
        lower = month["lower_at"] or datetime.min.replace(tzinfo=UTC)
        try:
            async with conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}")
                # Every workspace's lines: a month is judged on all of them (row-level
                # security would hide the other workspaces' and drop their history).
                await conn.execute("SET LOCAL taskflow.workspace = '*'")
                await conn.execute(f'LOCK TABLE "{name}" IN ACCESS EXCLUSIVE MODE')
                kept = await conn.fetchval(kept_row, lower, month["upper_at"], workflows, befores)
                if not kept:
                    await conn.execute(f'DROP TABLE "{name}"')
        except asyncpg.LockNotAvailableError:
            continue
        if not kept:
            dropped.append(name)
    return dropped
