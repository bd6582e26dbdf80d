"""The connection pool and transactions: one use case, one connection, one transaction."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import asyncpg
from asyncpg.connection import LoggedQuery
from asyncpg.pool import PoolConnectionProxy

from taskflow.store.common import borrowing, record_build
from taskflow.store.common import replica as replica_reads
from taskflow.store.workspaces import scope as workspace_scope

#: A connection as use cases hold it: borrowed from the pool.
Connection: TypeAlias = "PoolConnectionProxy[Any]"

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: Called with the connection at the end of every :meth:`Database.transaction` of the
#: current task, just before it commits (``service.idempotency`` writes its key there, in
#: the transaction of the mutation's effect). Unset: nothing happens.
BEFORE_COMMIT: contextvars.ContextVar[Callable[[Connection], Awaitable[None]] | None] = (
    contextvars.ContextVar("taskflow_before_commit", default=None)
)


async def _init_connection(conn: asyncpg.Connection[Any]) -> None:
    for type_name in ("json", "jsonb"):
        await conn.set_type_codec(
            type_name, encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
        )


class Database:
    """asyncpg pools with JSON codecs; hand out transactions with :meth:`transaction`.

    Prepared statements keep PostgreSQL's default plan choice (``plan_cache_mode = auto``):
    a statement whose best plan depends on its arguments (claim-next's slot choice, inbox
    pages, reports) is planned for them; one whose plan suits every argument gets a generic
    plan after a few calls. A statement too costly to plan on every call does its planned
    part in a PL/pgSQL function, whose statements each session plans once (claim-next's
    writes, ``store/slots/claims.py``; bench/README.md).
    """

    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        url: str,
        keys: asyncpg.Pool[Any] | None = None,
        *,
        statement_cache_size: int = 100,
        listen_url: str | None = None,
        listening: bool = True,
        replica: replica_reads.Replica | None = None,
    ) -> None:
        self.pool = pool
        self.replica = replica
        self.url = url
        #: A direct connection's URL for LISTEN (``TASKFLOW_DATABASE_LISTEN_URL``): behind a
        #: pooler in transaction mode a LISTEN would sit on a server connection other
        #: clients borrow, and hear nothing once the pooler hands it on. None: ``url``.
        self.listen_url = listen_url
        #: False with ``TASKFLOW_SCHEDULER=poll``: no :meth:`listener` opens a connection
        #: (the workers and awaited starts poll instead).
        self.listening = listening
        #: Connections that hold an idempotency key's lock while the use case runs on the
        #: main pool: a pool of their own, so holders never wait for what they hold.
        self.keys = keys or pool
        self.statement_cache_size = statement_cache_size

    #: True for :meth:`bound` views: the caller's transaction encloses every use case's.
    in_transaction = False

    def bound(self, conn: Connection) -> Database:
        """This database seen from inside ``conn``'s open transaction: every use case run on
        it writes in that one transaction (each of its own transactions a savepoint), so the
        caller commits or rolls back the lot (the demo writes each past run this way)."""
        return _Bound(self, conn)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        statement_cache_size: int = 100,
        query_logger: Callable[[LoggedQuery], None] | None = None,
        listen_url: str | None = None,
        listening: bool = True,
        read_url: str | None = None,
        read_max_lag: float = 30.0,
    ) -> Database:
        """Open a pool on ``url``; ``query_logger`` sees every statement (diagnostics, tests).

        ``statement_cache_size`` is asyncpg's per connection (0 behind a pooler that cannot
        keep prepared statements); ``listen_url`` is where :meth:`listener` connects, unless
        ``listening`` is False (then nothing listens); ``read_url``: see :meth:`reading`.
        """

        async def init(conn: asyncpg.Connection[Any]) -> None:
            await _init_connection(conn)
            if query_logger is not None:
                conn.add_query_logger(query_logger)

        async def open_pool(min_size: int, on: str = url) -> asyncpg.Pool[Any]:
            pool = await asyncpg.create_pool(
                on,
                min_size=min_size,
                max_size=max_size,
                init=init,
                reset=borrowing.keep_session,
                statement_cache_size=statement_cache_size,
            )
            assert pool is not None
            return pool

        pool = await open_pool(min_size)
        # Connections that only hold idempotency keys' advisory locks (opened on first use).
        keys = await open_pool(0)
        replica = None  # opened on first read: one down at start sends reads to the primary
        if read_url is not None:
            replica = replica_reads.Replica(await open_pool(0, read_url), read_max_lag)
        return cls(
            pool,
            url,
            keys,
            statement_cache_size=statement_cache_size,
            listen_url=listen_url,
            listening=listening,
            replica=replica,
        )

    async def dedicated(self) -> asyncpg.Connection[Any]:
        """A connection of its own, outside the pools (a LISTEN): on ``listen_url`` when
        given (a direct one, where prepared statements live as long as the session), else on
        ``url`` with the pools' statement cache size."""
        if self.listen_url is not None:
            return await asyncpg.connect(self.listen_url)
        return await asyncpg.connect(self.url, statement_cache_size=self.statement_cache_size)

    def listener(
        self,
        channel: str,
        wake: Callable[[], None],
        heard: Callable[[str], None] | None = None,
        *,
        listen: bool | None = None,
    ) -> Listener:
        """A :class:`Listener` on ``channel`` over a connection of its own (a worker's, an
        awaited start's, the live feed's; ``heard`` gets each notification's payload). Not
        listening (``listen=False``, or by default ``TASKFLOW_SCHEDULER=poll``): one that
        never opens a connection, so only its owner's polling wakes it."""
        enabled = self.listening if listen is None else listen
        return Listener(self, channel, wake, heard, listen=enabled)

    async def close(self) -> None:
        await self.pool.close()
        if self.keys is not self.pool:
            await self.keys.close()
        if self.replica is not None:
            await self.replica.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """A connection inside a transaction: committed on success, rolled back on error."""
        async with borrowing.borrowed(self.pool) as conn, workspace_scope.transaction(conn):
            yield conn
            hook = BEFORE_COMMIT.get()
            if hook is not None:
                await hook(conn)

    def reading(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        """Reads that may lag (reports, history), never inbox or claims: ``replica.py``."""
        return replica_reads.reading(self.replica, self.transaction)

    @asynccontextmanager
    async def keyed(self) -> AsyncIterator[Connection]:
        """A transaction on the idempotency-key pool (see ``store/common/idempotency.py``)."""
        async with borrowing.borrowed(self.keys) as conn, workspace_scope.transaction(conn):
            yield conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection outside any explicit transaction, in the task's workspace (scope.py)."""
        async with borrowing.borrowed(self.pool) as conn, workspace_scope.outside(conn, self):
            yield conn

    @asynccontextmanager
    async def single(self) -> AsyncIterator[Connection]:
        """One statement alone, atomic, outside a transaction (claim-next's: it names its
        workspace); with ``BEFORE_COMMIT`` one transaction, an idempotency key with its effect."""
        async with borrowing.borrowed(self.pool) as conn:
            hook = BEFORE_COMMIT.get()
            if hook is None:
                await workspace_scope.named(conn, self)
                yield conn
                return
            async with workspace_scope.transaction(conn):
                yield conn
                await hook(conn)

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            async with self.pool.acquire(timeout=2) as conn:
                return bool(await conn.fetchval("SELECT true", timeout=2))
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
            return False


class _Bound(Database):
    """A :class:`Database` whose connections are all one connection, inside its transaction."""

    in_transaction = True

    def __init__(self, outer: Database, conn: Connection) -> None:
        super().__init__(
            outer.pool,
            outer.url,
            outer.keys,
            statement_cache_size=outer.statement_cache_size,
            listen_url=outer.listen_url,
            listening=outer.listening,
        )
        self._conn = conn

    def reading(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        return self.transaction()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self._conn.transaction():
            yield self._conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        yield self._conn

    @asynccontextmanager
    async def single(self) -> AsyncIterator[Connection]:
        yield self._conn

    def bound(self, conn: Connection) -> Database:
        return _Bound(self, conn)


class Listener:
    """A connection of its own LISTENing on ``channel`` (a worker's wake-ups): ``wake`` is
    called on each notification, and when the connection ends (so its loop wakes, finds it
    closed and listens again)."""

    def __init__(
        self,
        database: Database,
        channel: str,
        wake: Callable[[], None],
        heard: Callable[[str], None] | None = None,
        *,
        listen: bool = True,
    ) -> None:
        self.database = database
        self.channel = channel
        self.wake = wake
        self.heard = heard
        self.enabled = listen
        self._conn: asyncpg.Connection[Any] | None = None
        self._opening = asyncio.Lock()

    async def listen(self) -> None:
        """Listen, unless listening already (one connection for every caller)."""
        if not self.enabled:
            return
        async with self._opening:
            if self._conn is not None and not self._conn.is_closed():
                return
            self._conn = await self.database.dedicated()
            await self._conn.add_listener(self.channel, self._notified)
            self._conn.add_termination_listener(lambda _conn: self.wake())

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        if self.heard is not None:
            self.heard(str(payload))
        self.wake()

    def is_open(self) -> bool:
        """True while the connection listens."""
        return self._conn is not None and not self._conn.is_closed()

    async def close(self) -> None:
        """Stop listening (a connection already broken is simply dropped)."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close(timeout=1)
            self._conn = None


def uuid_or_none(text: str) -> uuid.UUID | None:
    """``text`` as a UUID, or None when it is none (an id no row can have)."""
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def columns(rows: Sequence[object], *fields: str) -> list[list[Any]]:
    """The array parameters of a statement that writes ``rows`` through ``unnest``: for each
    of ``fields``, that attribute of every row, in the rows' order."""
    return [[getattr(row, field) for row in rows] for field in fields]


def with_database(url: str, name: str) -> str:
    """``url`` pointed at database ``name`` (its query kept: works for host= socket URLs too)."""
    base, _, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    authority, _, _ = rest.partition("/")
    return f"{scheme}://{authority}/{name}" + (f"?{query}" if query else "")


# -- rows as dataclasses -------------------------------------------------------------------------

_Row = TypeVar("_Row", bound="DataclassInstance")
_ABSENT = object()

#: The usual renames for :func:`record_as`: a row's references are named by the table they
#: point to (``run``), the dataclasses' fields by what they hold (``run_id``).
REFERENCES: Mapping[str, str] = {"run_id": "run", "slot_id": "slot", "link_id": "link"}


#: ``columns`` as ``record_build.builder`` keys it (the common renames computed once).
_NO_RENAMES: tuple[tuple[str, str], ...] = ()
_REFERENCES_KEY = tuple(sorted(REFERENCES.items()))


def record_as(
    cls: type[_Row],
    record: asyncpg.Record | Mapping[str, Any],
    prefix: str = "",
    *,
    columns: Mapping[str, str] | None = None,
    **given: Any,
) -> _Row:
    """The frozen dataclass ``cls`` built from ``record``, field by field.

    Each field reads the column of its name (``columns`` renames: ``{"run_id": "run"}``),
    after ``prefix`` (joined rows: ``"s_"``); ``given`` fields are not read. The conversions,
    the same for every row: a UUID becomes its text (ids are strings above the store); an
    array read into a field declared a tuple becomes a tuple; JSON arrives decoded (the pool's
    codec). A field with a default keeps it when the record has no such column.
    """
    if columns is None:
        renames = _NO_RENAMES
    elif columns is REFERENCES:
        renames = _REFERENCES_KEY
    else:
        renames = tuple(sorted(columns.items()))
    built: _Row = record_build.builder(cls, prefix, renames, tuple(given), _ABSENT)(record, given)
    return built
