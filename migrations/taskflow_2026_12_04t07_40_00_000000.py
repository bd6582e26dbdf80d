"""An awaited start's wake-ups: a statement-level trigger on the timeline notifies channel
taskflow_runs when a run entered a state, opened a slot or ended (store/runs/run_watch.sql);
startRun's waitFor listens on it. Going backwards drops the trigger and its function.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T07:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "run_moved_notify: waking awaited starts"

FUNCTION = "-- The trigger function telling waiters of an awaited start (startRun's waitFor) that a run\n-- entered a state, opened a slot or ended: one notification on channel taskflow_runs per\n-- transaction (an empty payload is folded), whoever wrote the lines (a use case, the\n-- worker's batches, claim statements in SQL); waiters re-read their own run. Created by\n-- migration 2026-12-04T07:40.\nCREATE FUNCTION run_moved_notify() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  IF EXISTS (SELECT 1 FROM moved_lines l\n              WHERE l.kind IN ('state.entered', 'slot.opened', 'run.completed',\n                               'run.cancelled')) THEN\n    PERFORM pg_notify('taskflow_runs', '');\n  END IF;\n  RETURN NULL;\nEND\n$$"

TRIGGER = "-- After every statement inserting timeline lines (migration 2026-12-04T07:40).\nCREATE TRIGGER audit_event_run_moved AFTER INSERT ON audit_event\nREFERENCING NEW TABLE AS moved_lines\nFOR EACH STATEMENT EXECUTE FUNCTION run_moved_notify()"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        [FUNCTION, TRIGGER],
        [
            "DROP TRIGGER IF EXISTS audit_event_run_moved ON audit_event",
            "DROP FUNCTION IF EXISTS run_moved_notify()",
        ],
    )
