"""Applying the migrations in ``migrations/`` to a database."""

from __future__ import annotations

import contextlib
import io
import os

from taskflow import errors

PICCOLO_CONF = "taskflow.store.common.piccolo_conf"


def _use_piccolo_conf(url: str) -> None:
    os.environ["PICCOLO_CONF"] = PICCOLO_CONF
    # Read by piccolo_conf at import, before any engine is built on a default address.
    os.environ["TASKFLOW_MIGRATION_URL"] = url


async def migrate(url: str, *, quiet: bool = True, up_to: str = "all") -> None:
    """Bring the database at ``url`` up to the newest migration (idempotent), or only up to
    migration id ``up_to`` (bench/partition.py migrates a populated database the rest)."""
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
