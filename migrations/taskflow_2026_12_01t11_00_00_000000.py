"""A covering index of ended, measured slots: the SLA report reads them from it alone.

``schema_extras.ENDED_REPORT_COLUMNS`` lists what it carries. Index-only
scans skip the table for pages the visibility map marks all-visible, which
autovacuum keeps up for slots that have ended (they are rarely written again);
after ``taskflow measure-slots`` rewrites many slots at once, a ``VACUUM slot``
brings the report to full speed sooner.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T11:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "covering index of ended slots for the SLA report"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            "CREATE INDEX slot_ended_report ON slot (opened_at) INCLUDE (workflow, state, name, "
            "priority, audience, holder, satisfied_by, satisfied_at, cancelled_at, clock_met, "
            "breach_from, measured_clock, pickup_biz_us, pickup_real_us, done_biz_us, "
            "done_real_us, worked_us) "
            "WHERE measured_clock IS NOT NULL AND status IN ('cancelled', 'satisfied')"
        )

    async def drop() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS slot_ended_report")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
