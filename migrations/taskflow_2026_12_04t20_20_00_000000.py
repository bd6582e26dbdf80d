"""Teams' own calendars (docs/calendars.md, "The calendar chain"): ``team_calendar`` names
the calendar of a team (an audience key, ``role:finance``), the chain's ``team`` link. A
workspace holds it: the ``workspace`` column from the transaction's setting, one calendar per
team in a workspace, and the same row-level security wall as every held table. The
statements are frozen copies of ``store/clocks/team_calendars.py`` and
``store/workspaces/schema.py`` as of this migration."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T20:20:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "teams' own calendars"

FORWARDS = (
    "CREATE TABLE team_calendar ("
    " team text NOT NULL,"
    " calendar text NOT NULL,"
    " set_at timestamptz NOT NULL,"
    " set_by text NOT NULL)",
    "ALTER TABLE team_calendar ADD COLUMN workspace uuid NOT NULL DEFAULT '00000000-0000-4000-8000-000000000001' REFERENCES workspace (id)",
    "ALTER TABLE team_calendar ALTER COLUMN workspace SET DEFAULT taskflow_workspace()",
    "CREATE UNIQUE INDEX team_calendar_team ON team_calendar (workspace, team)",
    "ALTER TABLE team_calendar ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE team_calendar FORCE ROW LEVEL SECURITY",
    "CREATE POLICY workspace_wall ON team_calendar USING ((SELECT current_setting('taskflow.workspace', true) = '*') OR workspace = (SELECT CASE WHEN current_setting('taskflow.workspace', true) ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN current_setting('taskflow.workspace', true)::uuid END))",
)
BACKWARDS = ("DROP TABLE IF EXISTS team_calendar",)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, FORWARDS, BACKWARDS)
