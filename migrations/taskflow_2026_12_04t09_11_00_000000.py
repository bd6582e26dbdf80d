"""subject.gone_at: when a subject was deleted (deleteSubject). Its row stays for the history
of its runs, which ended with it; a deleted subject takes no new run. Null for every subject
tracked so far; going backwards drops the column."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T09:11:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "subject.gone_at (deleteSubject)"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        ["ALTER TABLE subject ADD COLUMN gone_at timestamp with time zone NULL"],
        ["ALTER TABLE subject DROP COLUMN gone_at"],
    )
