"""Holiday feeds' last outcome (table ``calendar_feed``, global as calendars are): the
worker writes a row per feed file after each ask, needsAttention reads the failing ones
(``CALENDAR_FEED_FAILING``; docs/calendars.md, "ICS feeds over HTTPS")."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow.core.operate.feed_attention import FeedStatus
from taskflow.store.common import db, sql

#: The statements of ``clocks/calendar_feeds.sql``.
SQL = sql.statements("clocks/calendar_feeds")

#: The table (migration 2026-12-05T01:20).
TABLE = (
    "calendar_feed",
    "CREATE TABLE calendar_feed ("
    " file text PRIMARY KEY,"
    " url text NOT NULL,"
    " calendars text[] NOT NULL DEFAULT '{}',"
    " checked_at timestamptz NOT NULL,"
    " failing_since timestamptz,"
    " last_error text)",
)


async def succeeded(
    conn: db.Connection, file: str, url: str, calendars: Sequence[str], at: datetime
) -> None:
    """The feed in ``file`` answered (a new copy or a 304): it fails no more."""
    await conn.execute(SQL["succeeded"], file, url, list(calendars), at)


async def failed(
    conn: db.Connection,
    file: str,
    url: str,
    calendars: Sequence[str],
    at: datetime,
    error: str,
) -> None:
    """The feed in ``file`` failed at ``at``; it has been failing since its first failure
    after its last success."""
    await conn.execute(SQL["failed"], file, url, list(calendars), at, error)


async def failing(conn: db.Connection) -> list[FeedStatus]:
    """The feeds failing now, longest first."""
    return [
        FeedStatus(
            file=r["file"],
            url=r["url"],
            calendars=tuple(r["calendars"]),
            failing_since=r["failing_since"],
            last_error=r["last_error"] or "",
        )
        for r in await conn.fetch(SQL["failing"])
    ]
