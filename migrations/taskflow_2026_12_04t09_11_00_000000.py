"""subject.gone_at: when a subject was deleted (deleteSubject). Its row stays for the history
of its runs, which ended with it; a deleted subject takes no new run. Null for every subject
tracked so far; going backwards drops the column."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-04T09:11:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "subject.gone_at (deleteSubject)"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def add() -> None:
        await _Raw.raw("ALTER TABLE subject ADD COLUMN gone_at timestamp with time zone NULL")

    async def drop() -> None:
        await _Raw.raw("ALTER TABLE subject DROP COLUMN gone_at")

    manager.add_raw(add)
    manager.add_raw_backwards(drop)
    return manager
