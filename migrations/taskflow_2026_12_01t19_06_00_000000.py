"""Poison timers: failed firings are counted, backed off, and parked dead with their error.

``attempts`` counts failed firings since the timer last fired or was armed;
``planned_at`` keeps the due instant the definition planned while a failure
pushed ``due_at`` back; ``last_error`` and ``failed_at`` tell an admin what
went wrong. Dead timers (status ``dead``) are listed from a small partial index.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:06:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "timer attempts, last error and planned due instant; dead timers index"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            "ALTER TABLE timer ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0, "
            "ADD COLUMN last_error TEXT NULL DEFAULT null, "
            "ADD COLUMN failed_at TIMESTAMPTZ NULL DEFAULT null, "
            "ADD COLUMN planned_at TIMESTAMPTZ NULL DEFAULT null"
        )
        await _Raw.raw("CREATE INDEX timer_dead ON timer (id) WHERE status = 'dead'")

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS timer_dead")
        await _Raw.raw(
            "ALTER TABLE timer DROP COLUMN IF EXISTS attempts, "
            "DROP COLUMN IF EXISTS last_error, DROP COLUMN IF EXISTS failed_at, "
            "DROP COLUMN IF EXISTS planned_at"
        )

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
