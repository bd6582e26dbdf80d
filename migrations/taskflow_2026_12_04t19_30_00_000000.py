"""Workspaces wall the three tables added after the workspace migration (docs/workspaces.md):
``automation_line`` (a line takes its timeline line's workspace), ``automation_pending`` (its
run's) and ``slot_forecast`` (its slot's) get the ``workspace`` column, filled by the same
trigger (``workspace_from_parent``, replaced with their two new branches), the rows already
there moved to their parent's workspace, and forced row-level security with the same policy.
The timeline's partitions get the parent's policy too (one read by name was not walled).
The statements are frozen copies of ``store/workspaces/schema.py`` as of this migration."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T19:30:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "workspaces wall automation_line, automation_pending, slot_forecast"

#: The walls and the partition maker as this migration made them (frozen copies; migration
#: 2026-12-05T02:00 made both wrappers of generic functions).
WALLS = "-- timeline_partition_walls(part): a partition gets the timeline's row-level security and\n-- policies (the workspace wall, docs/workspaces.md). A query through audit_event meets the\n-- parent's policy; one naming the partition meets only the partition's own (migration\n-- 2026-12-04T19:30 walled the partitions made before; timeline_partitions() walls each new one).\nCREATE FUNCTION timeline_partition_walls(part regclass) RETURNS void\nLANGUAGE plpgsql AS $$\nDECLARE\n  r record;\nBEGIN\n  IF (SELECT relrowsecurity FROM pg_class WHERE oid = 'audit_event'::regclass) THEN\n    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', part);\n  END IF;\n  IF (SELECT relforcerowsecurity FROM pg_class WHERE oid = 'audit_event'::regclass) THEN\n    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', part);\n  END IF;\n  FOR r IN SELECT * FROM pg_policies p\n           WHERE p.schemaname = current_schema() AND p.tablename = 'audit_event'\n             AND NOT EXISTS (SELECT 1 FROM pg_policy o\n                             WHERE o.polrelid = part AND o.polname = p.policyname) LOOP\n    EXECUTE format('CREATE POLICY %I ON %s AS %s FOR %s TO %s%s%s',\n                   r.policyname, part, r.permissive, r.cmd,\n                   (SELECT string_agg(quote_ident(x), ', ') FROM unnest(r.roles) x),\n                   coalesce(' USING (' || r.qual || ')', ''),\n                   coalesce(' WITH CHECK (' || r.with_check || ')', ''));\n  END LOOP;\nEND $$"
FUNCTION = "-- timeline_partitions(at, ahead): the month partitions of at's month and the `ahead`\n-- after it, made where missing (the worker calls it); lines the DEFAULT partition took\n-- for such a month move into it. A month the first partition covers is skipped (the\n-- overlap is refused), as is one another worker made at the same moment. SELECT * moves whole rows: the columns are the parent's, whatever\n-- migrations added. Returns how many partitions it made.\nCREATE FUNCTION timeline_partitions(at timestamptz, ahead integer) RETURNS integer\nLANGUAGE plpgsql AS $$\nDECLARE\n  made integer := 0;\n  lo timestamptz;\n  hi timestamptz;\n  part text;\nBEGIN\n  FOR i IN 0..ahead LOOP\n    lo := date_trunc('month', at, 'UTC') + make_interval(months => i);\n    hi := lo + interval '1 month';\n    part := 'audit_event_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');\n    CONTINUE WHEN to_regclass(part) IS NOT NULL;\n    BEGIN\n      EXECUTE format('CREATE TABLE %I (LIKE audit_event INCLUDING DEFAULTS INCLUDING IDENTITY '\n                     'INCLUDING GENERATED INCLUDING STORAGE)', part);\n      EXECUTE format('WITH m AS (DELETE FROM audit_event_default WHERE at >= %L AND at < %L '\n                     'RETURNING *) INSERT INTO %I SELECT * FROM m', lo, hi, part);\n      EXECUTE format('ALTER TABLE audit_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',\n                     part, lo, hi);\n      PERFORM timeline_partition_walls(part::regclass);\n      made := made + 1;\n    EXCEPTION WHEN invalid_object_definition OR duplicate_table THEN\n      NULL;  -- the first partition's months, or another worker made it just now\n    END;\n  END LOOP;\n  RETURN made;\nEND $$"

FORWARDS = (
    "ALTER TABLE automation_line ADD COLUMN workspace uuid NOT NULL DEFAULT '00000000-0000-4000-8000-000000000001' REFERENCES workspace (id)",
    "ALTER TABLE automation_line ALTER COLUMN workspace SET DEFAULT taskflow_workspace()",
    "ALTER TABLE automation_pending ADD COLUMN workspace uuid NOT NULL DEFAULT '00000000-0000-4000-8000-000000000001' REFERENCES workspace (id)",
    "ALTER TABLE automation_pending ALTER COLUMN workspace SET DEFAULT taskflow_workspace()",
    "ALTER TABLE slot_forecast ADD COLUMN workspace uuid NOT NULL DEFAULT '00000000-0000-4000-8000-000000000001' REFERENCES workspace (id)",
    "ALTER TABLE slot_forecast ALTER COLUMN workspace SET DEFAULT taskflow_workspace()",
    "CREATE OR REPLACE FUNCTION workspace_from_parent() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  w uuid;\nBEGIN\n  IF TG_TABLE_NAME = 'run' THEN\n    SELECT workspace INTO w FROM subject WHERE id = NEW.subject;\n  ELSIF TG_TABLE_NAME = 'run_child' THEN\n    SELECT workspace INTO w FROM run WHERE id = NEW.parent;\n  ELSIF TG_TABLE_NAME = 'automation_act' THEN\n    SELECT workspace INTO w FROM automation WHERE id = NEW.automation;\n  ELSIF TG_TABLE_NAME = 'step_attempt' THEN\n    SELECT workspace INTO w FROM step WHERE id = NEW.step;\n  ELSIF TG_TABLE_NAME = 'webhook_delivery' THEN\n    SELECT workspace INTO w FROM webhook_endpoint WHERE id = NEW.endpoint;\n  ELSIF TG_TABLE_NAME = 'automation_line' THEN\n    SELECT workspace INTO w FROM audit_event WHERE id = NEW.line;\n  ELSIF TG_TABLE_NAME = 'slot_forecast' THEN\n    SELECT workspace INTO w FROM slot WHERE id = NEW.slot;\n  ELSIF NEW.run IS NOT NULL THEN\n    SELECT workspace INTO w FROM run WHERE id = NEW.run;\n  END IF;\n  NEW.workspace := coalesce(w, NEW.workspace);\n  RETURN NEW;\nEND\n$$",
    "CREATE TRIGGER automation_line_workspace BEFORE INSERT ON automation_line FOR EACH ROW EXECUTE FUNCTION workspace_from_parent()",
    "CREATE TRIGGER automation_pending_workspace BEFORE INSERT ON automation_pending FOR EACH ROW EXECUTE FUNCTION workspace_from_parent()",
    "CREATE TRIGGER slot_forecast_workspace BEFORE INSERT ON slot_forecast FOR EACH ROW EXECUTE FUNCTION workspace_from_parent()",
    "UPDATE automation_line q SET workspace = e.workspace FROM audit_event e WHERE e.id = q.line AND q.workspace <> e.workspace",
    "UPDATE automation_pending p SET workspace = r.workspace FROM run r WHERE r.id = p.run AND p.workspace <> r.workspace",
    "UPDATE slot_forecast f SET workspace = s.workspace FROM slot s WHERE s.id = f.slot AND f.workspace <> s.workspace",
    "ALTER TABLE automation_line ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE automation_line FORCE ROW LEVEL SECURITY",
    "CREATE POLICY workspace_wall ON automation_line USING ((SELECT current_setting('taskflow.workspace', true) = '*') OR workspace = (SELECT CASE WHEN current_setting('taskflow.workspace', true) ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN current_setting('taskflow.workspace', true)::uuid END))",
    "ALTER TABLE automation_pending ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE automation_pending FORCE ROW LEVEL SECURITY",
    "CREATE POLICY workspace_wall ON automation_pending USING ((SELECT current_setting('taskflow.workspace', true) = '*') OR workspace = (SELECT CASE WHEN current_setting('taskflow.workspace', true) ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN current_setting('taskflow.workspace', true)::uuid END))",
    "ALTER TABLE slot_forecast ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE slot_forecast FORCE ROW LEVEL SECURITY",
    "CREATE POLICY workspace_wall ON slot_forecast USING ((SELECT current_setting('taskflow.workspace', true) = '*') OR workspace = (SELECT CASE WHEN current_setting('taskflow.workspace', true) ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN current_setting('taskflow.workspace', true)::uuid END))",
)
#: The timeline's partitions walled as their parent (migration 2026-12-04T19:00 made the
#: DEFAULT one after the policy, the worker makes months): the function walling one, the
#: partition maker calling it, and every partition made so far walled.
FORWARDS += (
    WALLS,
    FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1),
    "SELECT timeline_partition_walls(i.inhrelid::regclass) FROM pg_inherits i"
    " WHERE i.inhparent = 'audit_event'::regclass",
)
#: The function as migration 2026-12-04T18:00 made it.
PREVIOUS_FUNCTION = "CREATE OR REPLACE FUNCTION workspace_from_parent() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  w uuid;\nBEGIN\n  IF TG_TABLE_NAME = 'run' THEN\n    SELECT workspace INTO w FROM subject WHERE id = NEW.subject;\n  ELSIF TG_TABLE_NAME = 'run_child' THEN\n    SELECT workspace INTO w FROM run WHERE id = NEW.parent;\n  ELSIF TG_TABLE_NAME = 'automation_act' THEN\n    SELECT workspace INTO w FROM automation WHERE id = NEW.automation;\n  ELSIF TG_TABLE_NAME = 'step_attempt' THEN\n    SELECT workspace INTO w FROM step WHERE id = NEW.step;\n  ELSIF TG_TABLE_NAME = 'webhook_delivery' THEN\n    SELECT workspace INTO w FROM webhook_endpoint WHERE id = NEW.endpoint;\n  ELSIF NEW.run IS NOT NULL THEN\n    SELECT workspace INTO w FROM run WHERE id = NEW.run;\n  END IF;\n  NEW.workspace := coalesce(w, NEW.workspace);\n  RETURN NEW;\nEND\n$$"
#: The partition maker as migration 2026-12-04T19:00 made it.
PREVIOUS_PARTITIONS = "CREATE OR REPLACE FUNCTION timeline_partitions(at timestamptz, ahead integer) RETURNS integer\nLANGUAGE plpgsql AS $$\nDECLARE\n  made integer := 0;\n  lo timestamptz;\n  hi timestamptz;\n  part text;\nBEGIN\n  FOR i IN 0..ahead LOOP\n    lo := date_trunc('month', at, 'UTC') + make_interval(months => i);\n    hi := lo + interval '1 month';\n    part := 'audit_event_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');\n    CONTINUE WHEN to_regclass(part) IS NOT NULL;\n    BEGIN\n      EXECUTE format('CREATE TABLE %I (LIKE audit_event INCLUDING DEFAULTS INCLUDING IDENTITY '\n                     'INCLUDING GENERATED INCLUDING STORAGE)', part);\n      EXECUTE format('WITH m AS (DELETE FROM audit_event_default WHERE at >= %L AND at < %L '\n                     'RETURNING *) INSERT INTO %I SELECT * FROM m', lo, hi, part);\n      EXECUTE format('ALTER TABLE audit_event ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',\n                     part, lo, hi);\n      made := made + 1;\n    EXCEPTION WHEN invalid_object_definition OR duplicate_table THEN\n      NULL;  -- the first partition's months, or another worker made it just now\n    END;\n  END LOOP;\n  RETURN made;\nEND $$"
BACKWARDS = (
    PREVIOUS_PARTITIONS,
    "DROP FUNCTION IF EXISTS timeline_partition_walls(regclass)",
    "DROP POLICY IF EXISTS workspace_wall ON automation_line",
    "ALTER TABLE automation_line NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE automation_line DISABLE ROW LEVEL SECURITY",
    "DROP TRIGGER IF EXISTS automation_line_workspace ON automation_line",
    "ALTER TABLE automation_line DROP COLUMN IF EXISTS workspace",
    "DROP POLICY IF EXISTS workspace_wall ON automation_pending",
    "ALTER TABLE automation_pending NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE automation_pending DISABLE ROW LEVEL SECURITY",
    "DROP TRIGGER IF EXISTS automation_pending_workspace ON automation_pending",
    "ALTER TABLE automation_pending DROP COLUMN IF EXISTS workspace",
    "DROP POLICY IF EXISTS workspace_wall ON slot_forecast",
    "ALTER TABLE slot_forecast NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE slot_forecast DISABLE ROW LEVEL SECURITY",
    "DROP TRIGGER IF EXISTS slot_forecast_workspace ON slot_forecast",
    "ALTER TABLE slot_forecast DROP COLUMN IF EXISTS workspace",
    PREVIOUS_FUNCTION,
)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, FORWARDS, BACKWARDS)
