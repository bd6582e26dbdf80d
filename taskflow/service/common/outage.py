"""Telling an outage from a bug: the database is unreachable, restarting or shutting down.

Requests that meet one are answered ``UNAVAILABLE`` with a retry hint (GraphQL) or
HTTP 503 (pages, ``/health``) instead of a masked ``INTERNAL``. Nothing is half
written: every use case is one transaction, and a connection lost mid-way rolls it
back. The pool recovers by itself: asyncpg drops a closed connection on release and
opens a fresh one on the next acquire.
"""

from __future__ import annotations

import asyncpg

from taskflow import errors

#: Seconds a client should wait before retrying (the ``Retry-After`` of a 503).
RETRY_AFTER_SECONDS = 5

#: Errors that mean "the database is not reachable right now", not "a bug".
DATABASE_DOWN = (
    OSError,
    ConnectionError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.ConnectionDoesNotExistError,
)

#: Exception types an outage raises (``OSError``: refused or missing socket, reset).
OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
)


def is_unavailable(error: BaseException | None) -> bool:
    """True when ``error`` (or what caused it) says the database cannot be reached now."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, errors.TaskflowError) and error.code == "UNAVAILABLE":
            return True  # another backend's outage (the file storage)
        if isinstance(error, OUTAGE_ERRORS):
            # asyncpg raises InterfaceError for programming mistakes too; keep those bugs.
            return not isinstance(error, asyncpg.InterfaceError) or _closed(error)
        error = error.__cause__ or error.__context__
        seen += 1
    return False


def _closed(error: BaseException) -> bool:
    text = str(error).lower()
    return any(word in text for word in ("closed", "closing", "connection", "terminat"))


MESSAGE = (
    f"The database cannot be reached right now: retry in about {RETRY_AFTER_SECONDS} "
    "seconds (before repeating a change, read the object again: a change whose answer "
    "was lost may have been made)."
)
