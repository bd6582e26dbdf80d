"""The database server's clock, as seen from this process."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskflow.store.common import db


async def offset(database: db.Database) -> timedelta:
    """How far the database's clock is ahead of this machine's (negative: behind).

    The server's reading is compared with the middle of the round trip that fetched it, so
    the error is at most half that round trip."""
    async with database.connection() as conn:
        sent = datetime.now(UTC)
        server: datetime = await conn.fetchval("SELECT clock_timestamp()")
        received = datetime.now(UTC)
    return server - (sent + (received - sent) / 2)
