"""The live feed: a statement-level trigger on the timeline (``audit_event``) that NOTIFYs
``taskflow_live`` with the id range of the lines each statement inserted, at commit, for the
processes serving GraphQL subscriptions (docs/live.md). Going backwards drops it.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T08:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "live feed trigger on the timeline"

FUNCTION = "-- The trigger function announcing the ids of the timeline lines a statement inserted\n-- (migration 2026-12-04T08:30): 'low high' on channel taskflow_live, delivered at commit\n-- (never for a rolled-back decision). Constant size, whatever the statement wrote.\nCREATE FUNCTION live_lines() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  low bigint;\n  high bigint;\nBEGIN\n  SELECT min(id), max(id) INTO low, high FROM live_lines;\n  IF low IS NOT NULL THEN\n    PERFORM pg_notify('taskflow_live', low || ' ' || high);\n  END IF;\n  RETURN NULL;\nEND\n$$"
TRIGGER = "-- Every writer of timeline lines inserts into audit_event (the outbox's trigger sees the same).\nCREATE TRIGGER audit_event_live AFTER INSERT ON audit_event\nREFERENCING NEW TABLE AS live_lines\nFOR EACH STATEMENT EXECUTE FUNCTION live_lines()"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        [FUNCTION, TRIGGER],
        [
            "DROP TRIGGER IF EXISTS audit_event_live ON audit_event",
            "DROP FUNCTION IF EXISTS live_lines()",
        ],
    )
