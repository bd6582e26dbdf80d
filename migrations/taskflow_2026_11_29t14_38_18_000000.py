"""Reports measure on read only slots without stored measures (tables.EXTRA_INDEXES).

Slots that ended before this migration have no stored measures: the report
measures them on read until ``taskflow measure-slots`` stores them (business
time needs the calendars materialised, which a migration does not load).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T14:38:18:000000"
VERSION = "1.38.0"
DESCRIPTION = "index of slots a report measures on read"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw("CREATE INDEX slot_unmeasured_opened_at ON slot (opened_at) WHERE measured_clock IS NULL OR status NOT IN ('satisfied', 'cancelled')")

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS slot_unmeasured_opened_at")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
