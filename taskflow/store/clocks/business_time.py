"""Calendars' working intervals materialised in the database, so SQL can sum business time.

``calendar_interval`` holds each calendar's compiled working intervals (the
same arrays ``core.calendars`` binary-searches) with the working microseconds
before each one; ``business_us(calendar, t0, t1)`` is then ``cum(t1) - cum(t0)``,
two index lookups, and agrees with ``Calendar.elapsed`` to the microsecond.

Why a contiguous span per calendar, anchored once: cumulative time only
subtracts correctly when every interval counts from the same origin. The first
materialised year's start is the anchor (cumulative 0); later years continue
the count, earlier years count down (negative) from it. A zero-length
interval at the start of each compiled chunk makes ``cum`` defined from the
first instant of the span even when the calendar is closed there.

Nothing here touches the write path: reports call :func:`ensure` for the years
they need before their query, in a transaction of its own that locks only the
calendar's ``calendar_span`` row, and only when years are missing.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime
from typing import Any

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import timeline
from taskflow.store.common import db, sql

#: The statements of ``clocks/business_time.sql``.
SQL = sql.statements("clocks/business_time")

_MIN_YEAR, _MAX_YEAR = 1900, 2299


def digest(cal: calendars.Calendar) -> str:
    """A fingerprint of the calendar's definitions: edited files rebuild their intervals.

    Every version counts: working time before a new version's instant is unchanged,
    but the running count is rebuilt from one anchor so that sums stay comparable.
    """
    return hashlib.sha256(repr(cal.versions).encode()).hexdigest()[:32]


def _instant(us: int) -> datetime:
    return datetime.fromtimestamp(0, UTC) + us * timeline.ONE_US


def _records(
    cal: calendars.Calendar, first: int, stop: int, base: int
) -> tuple[list[tuple[Any, ...]], int]:
    """Interval rows for local years ``[first, stop)`` counting from ``base``; and the end count."""
    starts, ends = cal.intervals(first, stop)
    lo = timeline.local_us(cal.tz, date(first, 1, 1), 0)
    rows: list[tuple[Any, ...]] = []
    if not starts or starts[0] != lo:
        rows.append((cal.name, _instant(lo), _instant(lo), base))
    total = base
    for opens, closes in zip(starts, ends, strict=True):
        rows.append((cal.name, _instant(opens), _instant(closes), total))
        total += closes - opens
    return rows, total


async def _write(conn: db.Connection, rows: list[tuple[Any, ...]]) -> None:
    await conn.copy_records_to_table(
        "calendar_interval", records=rows, columns=["calendar", "starts_at", "ends_at", "cum_us"]
    )


async def covered(conn: db.Connection, names: list[str], digests: list[str]) -> list[Any]:
    """Each calendar's materialised span (None when absent or built from another definition)."""
    rows = await conn.fetch(
        SQL["covered"],
        names,
        digests,
    )
    return list(rows)


async def ensure(
    database: db.Database, cals: list[calendars.Calendar], first: int, stop: int
) -> bool:
    """Make sure local years ``[first, stop)`` of every calendar in ``cals`` are materialised;
    True when some were missing (written now: a replica may not have them yet).

    Idempotent and safe under concurrency: a read tells whether anything is
    missing; only then does one transaction per calendar lock its span row and
    extend it (a concurrent report waits for it, then finds the years present).
    """
    first, stop = max(first, _MIN_YEAR), min(stop, _MAX_YEAR + 1)
    async with database.connection() as conn:
        spans = await covered(conn, [c.name for c in cals], [digest(c) for c in cals])
    have = {r["name"]: (r["first_year"], r["stop_year"]) for r in spans}
    wrote = False
    for cal in cals:
        span = have.get(cal.name)
        if span and span[0] is not None and span[0] <= first and stop <= span[1]:
            continue
        async with database.transaction() as conn:
            await _extend(conn, cal, first, stop)
        wrote = True
    return wrote


async def _extend(conn: db.Connection, cal: calendars.Calendar, first: int, stop: int) -> None:
    fingerprint = digest(cal)
    await conn.execute(
        SQL["span_create"],
        cal.name,
        first,
        fingerprint,
    )
    span = await conn.fetchrow(SQL["span_lock"], cal.name)
    assert span is not None
    have_first, have_stop = span["first_year"], span["stop_year"]
    if span["digest"] != fingerprint or have_first == have_stop:
        # A changed definition invalidates every count: start over from this request's years.
        await conn.execute(SQL["intervals_drop"], cal.name)
        rows, _ = _records(cal, first, stop, 0)
        await _write(conn, rows)
        have_first, have_stop = first, stop
    else:
        if first < have_first:
            # Earlier years count down to the anchor: their total is known once compiled.
            rows, total = _records(cal, first, have_first, 0)
            await _write(conn, [(*r[:3], r[3] - total) for r in rows])
            have_first = first
        if stop > have_stop:
            end = await conn.fetchval(SQL["count_at_end"], cal.name)
            rows, _ = _records(cal, have_stop, stop, int(end))
            await _write(conn, rows)
            have_stop = stop
    await conn.execute(
        SQL["span_save"],
        cal.name,
        have_first,
        have_stop,
        fingerprint,
    )
