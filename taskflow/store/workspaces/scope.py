"""The workspace a task acts in, and naming it to the database per transaction
(docs/workspaces.md)."""

from __future__ import annotations

import contextlib
import contextvars
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asyncpg import exceptions as pg_errors
from asyncpg import transaction as pg_transaction

from taskflow.store.workspaces import schema as workspace_schema

#: The workspace the current task acts in (docs/workspaces.md): a request's is its caller's
#: (``service/access/principals.authenticate``); unset, ``'*'``: every workspace (workers,
#: the CLI), which the database role's own default gives without a statement.
WORKSPACE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "taskflow_workspace", default=workspace_schema.EVERY
)


#: Every workspace.
EVERY = workspace_schema.EVERY

#: Whether the task's workspace has a live-run limit, an open-slot limit (its caller's row
#: says so): a request whose workspace has none spends no statement checking it. A task in
#: every workspace (a worker) checks the run limit always.
RUNS_LIMITED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "taskflow_workspace_runs_limited", default=False
)
SLOTS_LIMITED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "taskflow_workspace_slots_limited", default=False
)


@contextlib.contextmanager
def acting_in(workspace: str) -> Iterator[None]:
    """Act in ``workspace`` for the block (a live group's reads, in its subscriber's), then
    in the task's workspace again."""
    token = WORKSPACE.set(_checked(workspace))
    try:
        yield
    finally:
        WORKSPACE.reset(token)


def every() -> contextlib.AbstractContextManager[None]:
    """Act in every workspace for the block (a lookup that finds the workspace: a token's
    principal; the live feed's reading of every line)."""
    return acting_in(EVERY)


def _checked(workspace: str) -> str:
    """``workspace`` as a UUID's text (the only text a transaction spells), or EVERY."""
    return workspace if workspace == EVERY else str(uuid.UUID(workspace))


def scope_to(workspace: str) -> None:
    """Act in ``workspace`` for the rest of the current task (a request: its caller's)."""
    WORKSPACE.set(_checked(workspace))


async def enter(conn: Any) -> None:
    """Name the task's workspace for this transaction (``SET LOCAL``: it ends with the
    transaction, so a pooler in transaction mode hands on no setting). Row-level security
    then shows only its rows. ``'*'`` costs nothing: the role's default (docs/workspaces.md).
    The value is a checked UUID (``scope_to``), so it is spelled in the text: a simple
    statement, no prepared one to keep per connection."""
    workspace = WORKSPACE.get()
    if workspace != workspace_schema.EVERY:
        await conn.execute(f"SELECT set_config('{workspace_schema.SETTING}', '{workspace}', true)")


async def enter_run(conn: Any, run_id: str) -> None:
    """In ``conn``'s open transaction, act in run ``run_id``'s workspace from here on (a
    worker starting a child for it: the child's subject is that workspace's)."""
    await conn.execute(workspace_schema.ENTER_RUN, run_id)


#: The workspace each direct connection's session is set to (:func:`keep_session`); a
#: connection not in it is at its role's default, every workspace.
_SESSIONS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _raw(conn: Any) -> Any:
    return getattr(conn, "_con", conn)


async def keep_session(conn: Any, *, named: bool = False) -> None:
    """Set a direct connection's session to the task's workspace when it is set to another:
    a round trip only when the workspace changes between borrowers (never behind a pooler,
    where the caller uses a transaction instead). ``named``: the statement to run names its
    workspace itself (claim-next), so a session in every workspace serves as well."""
    raw = _raw(conn)
    workspace = WORKSPACE.get()
    session = _SESSIONS.get(raw, EVERY)
    if named and session == EVERY:
        return
    if session != workspace:
        await raw.execute(f"SELECT set_config('{workspace_schema.SETTING}', '{workspace}', false)")
        _SESSIONS[raw] = workspace


def transaction(conn: Any) -> Any:
    """``conn.transaction()`` that names the task's workspace (:func:`enter`) in the same
    round trip as its ``BEGIN`` (one simple statement: ``BEGIN; SELECT set_config(...)``):
    a request's transaction costs no more round trips than before workspaces. When the
    connection's session is in the workspace already (the role's default, every workspace,
    or :func:`keep_session`'s) it is asyncpg's own transaction."""
    workspace = WORKSPACE.get()
    raw = _raw(conn)
    if _SESSIONS.get(raw, EVERY) == workspace:
        return conn.transaction()
    return _Begin(raw, workspace)


class _Begin(pg_transaction.Transaction):
    """asyncpg's transaction whose ``BEGIN`` also sets the workspace (top level only: a
    nested one is a savepoint of a transaction that set it already)."""

    __slots__ = ("_workspace",)

    def __init__(self, connection: Any, workspace: str) -> None:
        super().__init__(connection, None, False, False)
        self._workspace = workspace

    async def start(self) -> None:
        con = self._connection  # type: ignore[attr-defined]
        if con._top_xact is not None or con._protocol.is_in_transaction():
            raise pg_errors.InterfaceError("a workspace transaction cannot be nested")
        con._top_xact = self
        try:
            await con.execute(
                f"BEGIN; SELECT set_config('{workspace_schema.SETTING}', '{self._workspace}', true)"
            )
        except BaseException:
            self._state = pg_transaction.TransactionState.FAILED
            raise
        self._state = pg_transaction.TransactionState.STARTED


@contextlib.asynccontextmanager
async def outside(conn: Any, database: Any) -> AsyncIterator[None]:
    """``Database.connection``'s workspace: on a direct connection (a statement cache) its
    session's (:func:`keep_session`); behind a pooler (none) a session is not ours to keep, so
    a task in one workspace gets one transaction naming it (every: the role's default)."""
    if database.statement_cache_size > 0:
        await keep_session(conn)
        yield
    elif WORKSPACE.get() == EVERY:
        yield
    else:
        async with transaction(conn):
            yield


async def named(conn: Any, database: Any) -> None:
    """``Database.single``'s workspace: its statement names its own (claim-next's WHERE), so
    a session in every workspace serves; a direct connection's session in another is set."""
    if database.statement_cache_size > 0:
        await keep_session(conn, named=True)
