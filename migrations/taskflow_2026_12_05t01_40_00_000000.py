"""Requests per minute counted across processes (docs/workspaces.md, "Limits"):
``workspace_request_minute`` holds each workspace's count of the minute, one row every
process adds to (the count and the check one statement). A frozen copy of
``store/workspaces/limits.py``'s table as of this migration."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-05T01:40:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "workspace requests per minute, shared"

FORWARDS = (
    "CREATE TABLE workspace_request_minute ("
    " workspace_id uuid NOT NULL REFERENCES workspace (id) ON DELETE CASCADE,"
    " minute timestamptz NOT NULL,"
    " requests integer NOT NULL,"
    " PRIMARY KEY (workspace_id, minute))",
)
BACKWARDS = ("DROP TABLE IF EXISTS workspace_request_minute",)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, FORWARDS, BACKWARDS)
