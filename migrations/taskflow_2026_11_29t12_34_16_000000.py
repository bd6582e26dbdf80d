"""Indexes for subjects, runs, slots and the audit timeline (see tables.EXTRA_INDEXES)."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-11-29T12:34:16:000000"
VERSION = "1.38.0"
DESCRIPTION = "run and slot indexes"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create_indexes() -> None:
        await _Raw.raw(
            "CREATE UNIQUE INDEX subject_type_external_id_key ON subject (type, external_id)"
        )
        await _Raw.raw(
            "CREATE UNIQUE INDEX run_live_per_subject ON run (workflow, subject) WHERE status = 'active'"
        )
        await _Raw.raw(
            "CREATE INDEX run_correlation ON run (workflow, correlation_key) WHERE status = 'active' AND correlation_key IS NOT NULL"
        )
        await _Raw.raw("CREATE INDEX run_board ON run (workflow, status, started_at, id)")
        await _Raw.raw(
            "CREATE INDEX slot_live_by_due ON slot (due_at, priority, id) INCLUDE (status, holder, audience, deny, workflow, state, name) WHERE status IN ('open', 'claimed')"
        )
        await _Raw.raw(
            "CREATE INDEX slot_open_audience ON slot USING gin (audience) WHERE status = 'open'"
        )
        await _Raw.raw(
            "CREATE INDEX slot_open_by_due ON slot (due_at, priority, id) WHERE status = 'open'"
        )
        await _Raw.raw("CREATE INDEX slot_held ON slot (holder, due_at) WHERE status = 'claimed'")
        await _Raw.raw("CREATE INDEX slot_run_visit ON slot (run, visit)")
        await _Raw.raw("CREATE INDEX audit_event_run_at ON audit_event (run, id)")

    async def drop_indexes() -> None:
        await _Raw.raw("DROP INDEX IF EXISTS subject_type_external_id_key")
        await _Raw.raw("DROP INDEX IF EXISTS run_live_per_subject")
        await _Raw.raw("DROP INDEX IF EXISTS run_correlation")
        await _Raw.raw("DROP INDEX IF EXISTS run_board")
        await _Raw.raw("DROP INDEX IF EXISTS slot_live_by_due")
        await _Raw.raw("DROP INDEX IF EXISTS slot_open_audience")
        await _Raw.raw("DROP INDEX IF EXISTS slot_open_by_due")
        await _Raw.raw("DROP INDEX IF EXISTS slot_held")
        await _Raw.raw("DROP INDEX IF EXISTS slot_run_visit")
        await _Raw.raw("DROP INDEX IF EXISTS audit_event_run_at")

    manager.add_raw(create_indexes)
    manager.add_raw_backwards(drop_indexes)
    return manager
