"""The connection pool and transactions: one use case, one connection, one transaction."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import asyncpg
from asyncpg.connection import LoggedQuery
from asyncpg.pool import PoolConnectionProxy

#: A connection as use cases hold it: borrowed from the pool.
Connection: TypeAlias = "PoolConnectionProxy[Any]"


def placeholder(args: list[Any], value: Any, cast: str = "") -> str:
    """Append ``value`` to a statement's ``args``; its placeholder (``$n``, then ``cast``)."""
    args.append(value)
    return f"${len(args)}{cast}"


async def _init_connection(conn: asyncpg.Connection[Any]) -> None:
    for type_name in ("json", "jsonb"):
        await conn.set_type_codec(
            type_name, encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
        )


async def _keep_session(conn: asyncpg.Connection[Any]) -> None:
    """Skip asyncpg's reset round trip on release: pooled connections carry no session state
    (no LISTEN, no advisory locks, no SET outside a transaction; the worker listens on a
    connection of its own)."""


class Database:
    """An asyncpg pool with JSON codecs; hand out transactions with :meth:`transaction`."""

    def __init__(self, pool: asyncpg.Pool[Any], url: str) -> None:
        self.pool = pool
        self.url = url

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        query_logger: Callable[[LoggedQuery], None] | None = None,
    ) -> Database:
        """Open a pool on ``url``; ``query_logger`` sees every statement (diagnostics, tests)."""

        async def init(conn: asyncpg.Connection[Any]) -> None:
            await _init_connection(conn)
            if query_logger is not None:
                conn.add_query_logger(query_logger)

        pool = await asyncpg.create_pool(
            url, min_size=min_size, max_size=max_size, init=init, reset=_keep_session
        )
        assert pool is not None
        return cls(pool, url)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """A connection inside a transaction: committed on success, rolled back on error."""
        async with self.pool.acquire() as conn, conn.transaction():
            yield conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection outside any explicit transaction (single statements)."""
        async with self.pool.acquire() as conn:
            yield conn

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            async with self.pool.acquire(timeout=2) as conn:
                return bool(await conn.fetchval("SELECT true", timeout=2))
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
            return False
