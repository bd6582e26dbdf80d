"""The reports' partial indexes count an expired slot as ended (slot status ``expired``,
docs/sla.md "Expiry"): ``slot_ended_report`` (ended, measured slots read from the index
alone) and ``slot_unmeasured_opened_at`` (the slots measured on read) list it beside
satisfied and cancelled, so the report's conditions, which read the ended statuses from
``statuses.ENDED``, still imply the indexes' and an expired slot is counted once. Going
backwards restores 2026-12-01T21:35's predicates."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-04T09:13:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "report indexes: an expired slot is ended"

_COLUMNS = (
    "workflow, state, name, priority, audience, holder, satisfied_by, satisfied_at, "
    "cancelled_at, clock_met, breach_from, measured_clock, pickup_biz_us, pickup_real_us, "
    "done_biz_us, done_real_us, worked_us, run"
)


class _Raw(Table):
    pass


async def _indexes(ended: str) -> None:
    await _Raw.raw("DROP INDEX IF EXISTS slot_ended_report")
    await _Raw.raw(
        f"CREATE INDEX slot_ended_report ON slot (opened_at) INCLUDE ({_COLUMNS}) "
        f"WHERE measured_clock IS NOT NULL AND status IN ({ended})"
    )
    await _Raw.raw("DROP INDEX IF EXISTS slot_unmeasured_opened_at")
    await _Raw.raw(
        "CREATE INDEX slot_unmeasured_opened_at ON slot (opened_at) "
        f"WHERE measured_clock IS NULL OR status NOT IN ({ended})"
    )


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def with_expired() -> None:
        await _indexes("'cancelled', 'expired', 'satisfied'")

    async def without_expired() -> None:
        await _indexes("'cancelled', 'satisfied'")

    manager.add_raw(with_expired)
    manager.add_raw_backwards(without_expired)
    return manager
