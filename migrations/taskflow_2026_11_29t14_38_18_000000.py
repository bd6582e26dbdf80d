"""Reports measure on read only slots without stored measures (tables.EXTRA_INDEXES).

Existing ended slots keep null measures: the report computes those on read
until ``taskflow measure-slots`` (or the next report service backfill) stores
them; calendars are not materialised at migration time, so business time
cannot be computed here.
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
