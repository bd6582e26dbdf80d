"""Reads that may lag, on a streaming replica (``TASKFLOW_DATABASE_READ_URL``).

Reports, insights and history read here; the staff's inbox, claims and every write never
do (they use ``Database.transaction``), so what staff just did is what they see. A replica
further behind than the bound, or one that does not answer, is skipped: the read goes to
the primary, and :attr:`Replica.fallbacks` counts it (docs/deploy.md, "Read replica"). A
:class:`Watcher` (the Prometheus metrics, ``service/reports/metrics.py``) hears each lag
measured and each read sent to the primary.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from taskflow.core.operate.replica_lag import beyond_bound
from taskflow.store.workspaces import scope as workspace_scope

#: Seconds the replica's replay is behind the primary: 0 when it has replayed everything it
#: received (an idle primary writes nothing to be behind on), else the age of the last
#: transaction it replayed; NULL (never replayed one) counts as too far behind.
LAG_SQL = """
SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0.0
            ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END
"""

#: Failures that mean "this replica cannot serve now": read the primary instead.
UNAVAILABLE = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)

#: How far behind the replica is, asked on a connection to it (seconds; None: cannot tell).
LagSource = Callable[["PoolConnectionProxy[Any]"], Awaitable[float | None]]


async def replay_lag(conn: PoolConnectionProxy[Any]) -> float | None:
    """The replica's own answer (:data:`LAG_SQL`): what production uses."""
    lag = await conn.fetchval(LAG_SQL, timeout=2)
    return None if lag is None else float(lag)


class Watcher(Protocol):
    """Hears what the replica reads find (the metrics)."""

    def measured(self, lag: float | None) -> None:
        """A lag was measured (None: the replica did not answer or cannot tell)."""

    def fell_back(self, why: str) -> None:
        """A read went to the primary: ``why`` is "lagging" or "unavailable"."""


class Replica:
    """A pool on the replica and the lag it may be behind before reads skip it."""

    def __init__(
        self, pool: asyncpg.Pool[Any], max_lag: float, lag_source: LagSource = replay_lag
    ) -> None:
        self.pool = pool
        self.max_lag = max_lag
        #: Asks the replica's lag (tests inject one: a replica that lags on demand).
        self.lag_source = lag_source
        #: Reads sent to the primary because the replica lagged or failed.
        self.fallbacks = 0
        self.watcher: Watcher | None = None

    async def _measure(self, conn: PoolConnectionProxy[Any]) -> float | None:
        try:
            lag = await self.lag_source(conn)
        except UNAVAILABLE:
            lag = None
        if self.watcher is not None:
            self.watcher.measured(lag)
        return lag

    def _fell_back(self, why: str) -> None:
        self.fallbacks += 1
        if self.watcher is not None:
            self.watcher.fell_back(why)

    async def lag(self) -> float | None:
        """Seconds the replica is behind now; None when it does not answer or cannot tell
        (the needs-attention list and a scrape ask this)."""
        try:
            conn: PoolConnectionProxy[Any] = await self.pool.acquire(timeout=2)
        except UNAVAILABLE:
            self._unreachable()
            return None
        try:
            return await self._measure(conn)
        finally:
            await self.pool.release(conn)

    def _unreachable(self) -> None:
        if self.watcher is not None:
            self.watcher.measured(None)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[PoolConnectionProxy[Any] | None]:
        """A connection on the replica in a read-only transaction, or None when the replica
        is beyond the lag bound or unreachable (the caller reads the primary)."""
        try:
            conn: PoolConnectionProxy[Any] = await self.pool.acquire(timeout=2)
        except UNAVAILABLE:
            self._unreachable()
            self._fell_back("unavailable")
            yield None
            return
        try:
            lag = await self._measure(conn)
            if beyond_bound(lag, self.max_lag):
                self._fell_back("lagging" if lag is not None else "unavailable")
                yield None
                return
            async with conn.transaction(readonly=True):
                await workspace_scope.enter(conn)
                yield conn
        finally:
            await self.pool.release(conn)

    async def close(self) -> None:
        await self.pool.close()


@asynccontextmanager
async def reading(
    replica: Replica | None,
    primary: Callable[[], AbstractAsyncContextManager[PoolConnectionProxy[Any]]],
) -> AsyncIterator[PoolConnectionProxy[Any]]:
    """``Database.reading``: the replica's read-only transaction when there is a replica
    and it can serve, else ``primary()`` (a transaction on the primary)."""
    if replica is not None:
        async with replica.read() as conn:
            if conn is not None:
                yield conn
                return
    async with primary() as conn:
        yield conn
