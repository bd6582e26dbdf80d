"""Indexes the table classes cannot declare (``taskflow.store.common.tables.EXTRA_INDEXES``).

Piccolo runs a migration's raw steps before its table steps, so raw indexes
live in a migration after the one that creates their tables.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T12:24:08:000000"
VERSION = "1.38.0"
DESCRIPTION = "principal indexes"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create_indexes() -> None:
        await _Raw.raw("CREATE INDEX principal_roles_gin ON principal USING gin (roles)")

    async def drop_indexes() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS principal_roles_gin")

    manager.add_raw(create_indexes)
    manager.add_raw_backwards(drop_indexes)
    return manager
