"""Indexes of the ``runs`` list (newest first, by workflow, state, correlation key, end).

``run_started`` serves the unfiltered list and the start window;
``run_workflow_started`` and ``run_state_started`` a workflow (and a state), read
backwards for newest first; ``run_correlation_any`` a correlation key on runs of any
status (``run_correlation_key`` holds active runs only); ``run_ended`` the end window.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:12:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "indexes of the runs list"

INDEXES = (
    ("run_started", "CREATE INDEX run_started ON run (started_at, id)"),
    (
        "run_workflow_started",
        "CREATE INDEX run_workflow_started ON run (workflow, started_at, id)",
    ),
    (
        "run_state_started",
        "CREATE INDEX run_state_started ON run (workflow, state, started_at, id)",
    ),
    (
        "run_correlation_any",
        "CREATE INDEX run_correlation_any ON run (correlation_key, started_at) "
        "WHERE correlation_key IS NOT NULL",
    ),
    ("run_ended", "CREATE INDEX run_ended ON run (ended_at) WHERE ended_at IS NOT NULL"),
)


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        for _, statement in INDEXES:
            await _Raw.raw(statement)

    async def drop() -> None:
        for name, _ in INDEXES:
            await _Raw.raw(f"DROP INDEX IF EXISTS {name}")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
