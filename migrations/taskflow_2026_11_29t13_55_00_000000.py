"""The inbox's GIN index without a pending list (see tables.EXTRA_INDEXES, slot_open_audience).

With ``fastupdate`` on, every slot that becomes open again waits in the index's
pending list, which each inbox search scans linearly; after a day of claims the
inbox got three times slower (bench/README.md, "Inbox and claims").
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T13:55:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "inbox gin index without pending list"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def no_pending_list() -> None:
        await _Raw.raw("ALTER INDEX slot_open_audience SET (fastupdate = off)")
        # Move what already waits in the pending list into the index proper.
        await _Raw.raw("SELECT gin_clean_pending_list('slot_open_audience'::regclass)")

    async def pending_list() -> None:
        await _Raw.raw("ALTER INDEX slot_open_audience SET (fastupdate = on)")

    manager.add_raw(no_pending_list)
    manager.add_raw_backwards(pending_list)
    return manager
