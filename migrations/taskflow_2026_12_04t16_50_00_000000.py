"""Files (docs/files.md): ``file_upload`` records who uploaded each stored file (a staff
principal, or a magic link), so a ``complete`` may only carry files its own caller uploaded
through ``POST /files`` or a form; the worker's sweep forgets rows older than a day."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T16:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "files: who uploaded each stored file"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        [
            "CREATE TABLE file_upload ("
            " sha256 text NOT NULL,"
            " uploader text NOT NULL,"
            " uploaded_at timestamptz NOT NULL,"
            " PRIMARY KEY (uploader, sha256))",
            "CREATE INDEX file_upload_uploaded_at ON file_upload (uploaded_at)",
        ],
        ["DROP TABLE IF EXISTS file_upload"],
    )
