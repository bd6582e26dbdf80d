"""The reports' partial indexes count an expired slot as ended (slot status ``expired``,
docs/sla.md "Expiry"): ``slot_ended_report`` (ended, measured slots read from the index
alone) and ``slot_unmeasured_opened_at`` (the slots measured on read) list it beside
satisfied and cancelled, so the report's conditions, which read the ended statuses from
``statuses.ENDED``, still imply the indexes' and an expired slot is counted once. Going
backwards restores 2026-12-01T21:35's predicates."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T09:13:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "report indexes: an expired slot is ended"

_COLUMNS = (
    "workflow, state, name, priority, audience, holder, satisfied_by, satisfied_at, "
    "cancelled_at, clock_met, breach_from, measured_clock, pickup_biz_us, pickup_real_us, "
    "done_biz_us, done_real_us, worked_us, run"
)


def _indexes(ended: str) -> list[str]:
    return [
        "DROP INDEX IF EXISTS slot_ended_report",
        f"CREATE INDEX slot_ended_report ON slot (opened_at) INCLUDE ({_COLUMNS}) "
        f"WHERE measured_clock IS NOT NULL AND status IN ({ended})",
        "DROP INDEX IF EXISTS slot_unmeasured_opened_at",
        "CREATE INDEX slot_unmeasured_opened_at ON slot (opened_at) "
        f"WHERE measured_clock IS NULL OR status NOT IN ({ended})",
    ]


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        _indexes("'cancelled', 'expired', 'satisfied'"),
        _indexes("'cancelled', 'satisfied'"),
    )
