"""The covering index of ended, measured slots carries the slot's run too.

The SLA report may group by the definition version a slot's run is on
(``groupBy: [VERSION]``, docs/versions.md): with the run in the index, ended
slots are still read from the index alone (``schema_extras.ENDED_REPORT_COLUMNS``).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T21:35:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "covering index of ended slots carries the run"

_BEFORE = (
    "workflow, state, name, priority, audience, holder, satisfied_by, satisfied_at, "
    "cancelled_at, clock_met, breach_from, measured_clock, pickup_biz_us, pickup_real_us, "
    "done_biz_us, done_real_us, worked_us"
)


class _Raw(Table):
    pass


def _create(columns: str) -> str:
    return (
        f"CREATE INDEX slot_ended_report ON slot (opened_at) INCLUDE ({columns}) "
        "WHERE measured_clock IS NOT NULL AND status IN ('cancelled', 'satisfied')"
    )


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def with_run() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS slot_ended_report")
        await _Raw.raw(_create(f"{_BEFORE}, run"))

    async def without_run() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS slot_ended_report")
        await _Raw.raw(_create(_BEFORE))

    manager.add_raw(with_run)
    manager.add_raw_backwards(without_run)
    return manager
