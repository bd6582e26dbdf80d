"""Indexes for SLA clocks, timers and notifications (see tables.EXTRA_INDEXES)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T12:48:03:000000"
VERSION = "1.38.0"
DESCRIPTION = "sla clock, timer and notification indexes"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create_indexes() -> None:
        await _Raw.raw(
            "CREATE UNIQUE INDEX sla_clock_slot_milestone ON sla_clock (slot, milestone)"
        )
        await _Raw.raw("CREATE INDEX timer_armed_due ON timer (due_at, id) WHERE status = 'armed'")
        await _Raw.raw("CREATE INDEX timer_slot ON timer (slot) WHERE slot IS NOT NULL")
        await _Raw.raw("CREATE INDEX timer_run ON timer (run)")
        await _Raw.raw("CREATE INDEX notification_recipient ON notification (recipient, id)")

    async def drop_indexes() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS sla_clock_slot_milestone")
        await _Raw.raw("DROP INDEX IF EXISTS timer_armed_due")
        await _Raw.raw("DROP INDEX IF EXISTS timer_slot")
        await _Raw.raw("DROP INDEX IF EXISTS timer_run")
        await _Raw.raw("DROP INDEX IF EXISTS notification_recipient")

    manager.add_raw(create_indexes)
    manager.add_raw_backwards(drop_indexes)
    return manager
