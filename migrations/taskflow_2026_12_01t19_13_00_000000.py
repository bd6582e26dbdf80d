"""The registry of deployed workflow definitions: name, version, digest, document, first seen.

Start-up (serve, worker, migrate, demo) records every loaded definition here and
refuses one whose digest differs from the recorded one at the same name and version.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:13:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "deployed workflow definitions"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            'CREATE TABLE "deployed_definition" ('
            "\"id\" VARCHAR(120) PRIMARY KEY NOT NULL DEFAULT '', "
            "\"workflow\" VARCHAR(100) NOT NULL DEFAULT '', "
            '"version" INTEGER NOT NULL DEFAULT 0, '
            "\"digest\" VARCHAR(100) NOT NULL DEFAULT '', "
            "\"document\" JSONB NOT NULL DEFAULT '{{}}', "  # braces doubled: raw() formats
            '"first_seen_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
            '"last_seen_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
            '"drift_allowed_at" TIMESTAMPTZ DEFAULT null)'
        )

    async def drop() -> None:
        await _Raw.raw('DROP TABLE IF EXISTS "deployed_definition"')

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
