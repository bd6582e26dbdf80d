"""Reading the live feed back (statements in ``live/live.sql``).

The ``audit_event_live`` trigger announces the id range of the timeline lines each
statement wrote (``CHANNEL``, at commit); a process listening reads those lines here in
one query per batch of announcements, and a resuming subscriber the lines after its cursor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from taskflow.store.common import db, sql

SQL = sql.statements("live/live")
#: The channel the trigger NOTIFYs: payload ``"<low id> <high id>"``.
CHANNEL = "taskflow_live"
#: The trigger and its function (schema_extras; migration 2026-12-04T08:30 made them).
FUNCTIONS = (("live_lines", SQL["live_function"]),)
TRIGGERS = (("audit_event_live", SQL["live_trigger"]),)


@dataclass(frozen=True)
class Line:
    """A committed timeline line as the live feed needs it (what changed, not how)."""

    id: int
    run: str
    slot: str | None
    kind: str
    workflow: str


def _line(row: asyncpg.Record) -> Line:
    slot = str(row["slot"]) if row["slot"] else None
    return Line(row["id"], str(row["run"]), slot, row["kind"], row["workflow"])


def parse_range(payload: str) -> tuple[int, int] | None:
    """The id range a notification announces (None for a payload that is not one)."""
    low, _, high = payload.partition(" ")
    try:
        return int(low), int(high or low)
    except ValueError:
        return None


async def lines_in(conn: db.Connection, ranges: Sequence[tuple[int, int]]) -> list[Line]:
    """The committed lines in ``ranges`` (inclusive), in id order."""
    if not ranges:
        return []
    rows = await conn.fetch(SQL["lines_in"], [r[0] for r in ranges], [r[1] for r in ranges])
    return [_line(r) for r in rows]


async def lines_after(conn: db.Connection, cursor: int, limit: int) -> list[Line]:
    """At most ``limit`` lines after id ``cursor``, in id order."""
    return [_line(r) for r in await conn.fetch(SQL["lines_after"], cursor, limit)]


async def last_line(conn: db.Connection) -> int:
    """The newest line's id (0 when there is none)."""
    return int(await conn.fetchval(SQL["last_line"]))
