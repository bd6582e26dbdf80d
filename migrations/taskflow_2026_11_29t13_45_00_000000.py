"""Drop audit_event_slot_pickup: reports read a slot's timeline through audit_event_run_at."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T13:45:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "drop unused report index"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS audit_event_slot_pickup")

    async def create() -> None:
        await _Raw.raw(
            "CREATE INDEX audit_event_slot_pickup ON audit_event (slot, at) "
            "WHERE kind IN ('slot.claimed', 'slot.assigned')"
        )

    manager.add_raw(drop)
    manager.add_raw_backwards(create)
    return manager
