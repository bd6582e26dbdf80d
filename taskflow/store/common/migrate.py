"""Applying the migrations in ``migrations/`` to a database."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os

from taskflow import errors

PICCOLO_CONF = "taskflow.store.common.piccolo_conf"


def _use_piccolo_conf(url: str) -> None:
    os.environ["PICCOLO_CONF"] = PICCOLO_CONF
    # Read by piccolo_conf at import, before any engine is built on a default address.
    os.environ["TASKFLOW_MIGRATION_URL"] = url


# The session-level advisory lock one migrating process holds: two hosts deploying at once
# would otherwise both create Piccolo's ledger and run the same migration twice.
MIGRATION_LOCK = "taskflow.migrate"
LOCK_RETRY_SECONDS = 0.5


async def migrate(url: str, *, quiet: bool = True, up_to: str = "all") -> None:
    """Bring the database at ``url`` up to the newest migration (idempotent), or only up to
    migration id ``up_to`` (bench/partition.py migrates a populated database the rest).

    One process at a time: a second one waits for the first to finish, then finds nothing
    left to do. ``url`` is a direct connection (``runtime.migration_url``), so the session's
    lock is held by this process's own server session, also where the pool goes through a
    pooler."""
    import asyncpg

    holder = await asyncpg.connect(url)
    try:
        said = quiet
        # Tried, not waited for in a statement: a waiting statement holds a snapshot, and the
        # holder's CREATE INDEX CONCURRENTLY waits for every older snapshot (a deadlock no
        # detector sees).
        while not await holder.fetchval(
            "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", MIGRATION_LOCK
        ):
            if not said:
                print("taskflow: another process is migrating this database; waiting for it.")
                said = True
            await asyncio.sleep(LOCK_RETRY_SECONDS)
        await _run_forwards(url, quiet=quiet, up_to=up_to)
    finally:
        await holder.close()  # ends the session, and its lock with it


async def _run_forwards(url: str, *, quiet: bool, up_to: str) -> None:
    _use_piccolo_conf(url)
    from piccolo.apps.migrations.commands.forwards import run_forwards

    from taskflow.store.common import piccolo_conf

    piccolo_conf.DB.config = {"dsn": url}
    sink: io.StringIO | None = io.StringIO() if quiet else None
    with contextlib.redirect_stdout(sink) if sink else contextlib.nullcontext():
        if up_to == "all":
            result = await run_forwards(app_name="all")
        else:
            result = await run_forwards(app_name="taskflow", migration_id=up_to)
    if not result.success:
        output = sink.getvalue() if sink else ""
        raise errors.TaskflowError(
            f"Migrations failed: {result.message}. {output}".strip(), code="MIGRATION_FAILED"
        )
