"""Borrowing a pool connection and giving it back, with less of asyncpg's per-borrow work.

The pools are asyncpg's (``db.Database.connect``); this module replaces what a borrow costs
around them: the shielded release task, the reset coroutines and timeout context, the idle
timer of a connection the pool would never close (bench/README.md, "claim-next: the
client's work per claim"). It reads asyncpg's pool internals (asyncpg 0.32, pinned below
0.40 in pyproject.toml); a connection not shaped as expected takes asyncpg's own release.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

Connection: TypeAlias = "PoolConnectionProxy[Any]"


async def keep_session(conn: asyncpg.Connection[Any]) -> None:
    """Skip asyncpg's reset round trip on release: no LISTEN, advisory lock or SET outlives a
    borrow but the workspace, which the next borrower sets to its own (workspaces/scope.py)."""


@asynccontextmanager
async def borrowed(pool: asyncpg.Pool[Any]) -> AsyncIterator[Connection]:
    """A connection of ``pool``, as ``pool.acquire()`` lends it, given back by
    :func:`give_back`."""
    conn: Connection = await pool.acquire()
    try:
        yield conn
    finally:
        await give_back(pool, conn)


async def give_back(pool: asyncpg.Pool[Any], conn: Connection) -> None:
    """``pool.release(conn)`` without its ``asyncio.shield``: the shield runs the release
    as a task of its own, two passes of the event loop per borrowed connection (35 µs of
    CPU in a loop of borrows, 8 without: bench/README.md, "claimNext: the answer from what
    the claim returned"). A connection with nothing to reset (:func:`_idle`) goes straight
    back to the pool's queue (:func:`_requeue`); any other takes asyncpg's release (its
    reset rolls back a transaction left open; cancelled meanwhile, it terminates the
    connection and the pool opens another), as does one that is not what this was written for."""
    holder, inner = getattr(conn, "_holder", None), getattr(conn, "_con", None)
    if inner is None or getattr(holder, "_pool", None) is not pool:
        await pool.release(conn)
        return
    inner._on_release()
    if _idle(pool, holder, inner):
        _requeue(pool, holder)
        return
    await holder.release(holder._timeout)  # type: ignore[union-attr]


def _idle(pool: Any, holder: Any, inner: Any) -> bool:
    """Whether asyncpg's release would send nothing and keep ``inner``: open, in no
    transaction, not being cancelled, no listener left, under its query budget, of the
    pool's generation. Then its reset (``keep_session``: nothing; asyncpg's own: a ROLLBACK
    only inside a transaction) has nothing to do, behind a pooler as directly."""
    protocol = inner._protocol
    return bool(
        not inner.is_closed()
        and not protocol.is_in_transaction()
        and inner._top_xact is None
        and not protocol._is_cancelling()
        and not inner._listeners
        and not inner._log_listeners
        and protocol.queries_count < holder._max_queries
        and holder._generation == pool._generation
        and pool._reset is keep_session
    )


def _requeue(pool: Any, holder: Any) -> None:
    """What asyncpg's release does last (the holder freed, back in the queue), without its
    timeout context and reset coroutines; the idle timer (``max_inactive_connection_lifetime``)
    is armed only while the pool holds connections above its floor, the only ones it closes
    (``_deactivate_inactive_connection``), not on every give-back of a floor connection."""
    holder._timeout = None
    holder._release()
    above_floor = len(pool._holders) > pool._minsize and (
        sum(h.is_connected() for h in pool._holders) > pool._minsize
    )
    if holder._max_inactive_time and above_floor:
        holder._setup_inactive_callback()
