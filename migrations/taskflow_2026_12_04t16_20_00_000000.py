"""Insights read the slots that ended in a window (docs/insights.md): ``slot_ended_at`` on
the instant a slot ended (done or cancelled), so the pipeline's pickup latency and refusal
rate and the versions' breach rates read a day's slots, not every slot."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T16:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "insights: index on the instant a slot ended"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        [
            "CREATE INDEX slot_ended_at ON slot ((coalesce(satisfied_at, cancelled_at)))"
        ],
        ["DROP INDEX IF EXISTS slot_ended_at"],
    )
