"""Report page sessions: the /reports sign-in keeps a short-lived session, not the API token.

The cookie holds a random session id; the table keeps only its SHA-256 (``id``),
the principal, when it was made and expires, and when it was revoked (sign-out).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T19:08:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "report page sessions"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        await _Raw.raw(
            'CREATE TABLE "report_session" ('
            "\"id\" VARCHAR(64) PRIMARY KEY NOT NULL DEFAULT '', "
            "\"principal\" VARCHAR(200) NOT NULL DEFAULT '', "
            '"created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
            '"expires_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, '
            '"revoked_at" TIMESTAMPTZ DEFAULT null)'
        )
        await _Raw.raw(
            'CREATE INDEX report_session_principal ON "report_session" USING btree ("principal")'
        )

    async def drop() -> None:
        await _Raw.raw('DROP TABLE IF EXISTS "report_session"')

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
