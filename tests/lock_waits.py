"""Wait for PostgreSQL to say that requests are blocked on a lock, instead of sleeping."""

from __future__ import annotations

import asyncio

import asyncpg

_WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND datname = current_database() AND pid <> pg_backend_pid()"
)


#: Seconds to wait for them before failing.
WITHIN = 10.0


async def until_waiting(url: str, n: int = 1) -> None:
    """Return once ``n`` other connections to this database wait on a lock (a row lock, an
    advisory lock), as ``pg_stat_activity`` shows them; fail after :data:`WITHIN` seconds."""
    conn = await asyncpg.connect(url)
    try:
        async with asyncio.timeout(WITHIN):
            while True:
                if await conn.fetchval(_WAITING) >= n:
                    return
                await asyncio.sleep(0.005)  # a look at the server's view, not a deadline
    finally:
        await conn.close()
