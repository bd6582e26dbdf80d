"""Needs attention: runs remember when their route matched nothing; indexes for each reason.

``run.unmatched_at`` is set when a state's completion rule held but no route
matched (the ``route.unmatched`` line on the timeline) and cleared when the run
enters another state; runs already waiting that way are found from their
timeline. Each needs-attention reason reads a small partial index.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:11:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "run.unmatched_at and the needs-attention indexes"

INDEXES = (
    "CREATE INDEX run_unmatched ON run (unmatched_at) "
    "WHERE unmatched_at IS NOT NULL AND status = 'active'",
    "CREATE INDEX run_active_updated ON run (updated_at) WHERE status = 'active'",
    "CREATE INDEX timer_failing ON timer (failed_at) WHERE status = 'armed' AND attempts > 0",
    "CREATE INDEX slot_breached_unheld ON slot (sla_breached_at) "
    "WHERE status = 'open' AND sla_breached_at IS NOT NULL",
    "CREATE INDEX principal_inactive ON principal (id) WHERE NOT active",
)


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw("ALTER TABLE run ADD COLUMN unmatched_at TIMESTAMPTZ NULL DEFAULT null")
        # Runs that already wait after a route.unmatched line in their current state.
        await _Raw.raw(
            "UPDATE run r SET unmatched_at = a.at FROM ("
            "SELECT e.run, min(e.at) AS at FROM audit_event e JOIN run x ON x.id = e.run "
            "WHERE e.kind = 'route.unmatched' AND x.status = 'active' "
            "AND e.at >= x.state_entered_at GROUP BY e.run) a "
            "WHERE r.id = a.run"
        )
        for statement in INDEXES:
            await _Raw.raw(statement)

    async def drop() -> None:
        for name in (
            "run_unmatched",
            "run_active_updated",
            "timer_failing",
            "slot_breached_unheld",
            "principal_inactive",
        ):
            await _Raw.raw(f"DROP INDEX IF EXISTS {name}")
        await _Raw.raw("ALTER TABLE run DROP COLUMN IF EXISTS unmatched_at")

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
