"""Delayed starts: a SCHEDULED run (startRun's startAt) is a subject's live run of its
workflow too, so the one-live-run index covers it (a second start is refused, not let in to
collide with the scheduled run when it starts). Going backwards restores the index of
2026-11-29 (scheduled runs must have started or been cancelled first).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T07:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "one live run per subject: scheduled runs count"

INDEX = (
    "CREATE UNIQUE INDEX run_live_per_subject ON run (workflow, subject) "
    "WHERE status IN ('active', 'scheduled')"
)
PREVIOUS = (
    "CREATE UNIQUE INDEX run_live_per_subject ON run (workflow, subject) WHERE status = 'active'"
)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        ["DROP INDEX IF EXISTS run_live_per_subject", INDEX],
        ["DROP INDEX IF EXISTS run_live_per_subject", PREVIOUS],
    )
