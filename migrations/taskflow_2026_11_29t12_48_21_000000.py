"""Indexes for magic links (see tables.EXTRA_INDEXES)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T12:48:21:000000"
VERSION = "1.38.0"
DESCRIPTION = "magic link indexes"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create_indexes() -> None:
        await _Raw.raw("CREATE INDEX magic_link_slot ON magic_link (slot, created_at)")
        await _Raw.raw("CREATE INDEX magic_link_run ON magic_link (run)")

    async def drop_indexes() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS magic_link_slot")
        await _Raw.raw("DROP INDEX IF EXISTS magic_link_run")

    manager.add_raw(create_indexes)
    manager.add_raw_backwards(drop_indexes)
    return manager
