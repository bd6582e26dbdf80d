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
#: The two reads of lines, each with its statement's snapshot (``with_snapshot``).
READS = {
    "lines_in": SQL["with_snapshot"].replace("{lines}", SQL["lines_in"]),
    "lines_after": SQL["with_snapshot"].replace("{lines}", SQL["lines_after"]),
}
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


@dataclass(frozen=True)
class Read:
    """Lines read in one statement, and its snapshot's bounds (xid8 as integers): every
    transaction below ``xmin`` had ended; none at or above ``xmax`` had started."""

    lines: list[Line]
    xmin: int
    xmax: int


def _read(rows: list[asyncpg.Record]) -> Read:
    return Read([_line(r) for r in rows if r["id"] is not None], rows[0]["xmin"], rows[0]["xmax"])


async def lines_in(conn: db.Connection, ranges: Sequence[tuple[int, int]]) -> Read:
    """The committed lines in ``ranges`` (inclusive), in id order."""
    lows, highs = [r[0] for r in ranges], [r[1] for r in ranges]
    return _read(await conn.fetch(READS["lines_in"], lows, highs))


async def lines_after(conn: db.Connection, cursor: int, limit: int) -> Read:
    """At most ``limit`` lines after id ``cursor``, in id order."""
    return _read(await conn.fetch(READS["lines_after"], cursor, limit))


async def last_line(conn: db.Connection) -> int:
    """The newest line's id (0 when there is none)."""
    return int(await conn.fetchval(SQL["last_line"]))
