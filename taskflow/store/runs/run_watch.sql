-- Waking those who wait on a run (store/runs/run_watch.py, service/runs/awaited.py).

-- name: watch_function
-- The trigger function telling waiters of an awaited start (startRun's waitFor) that a run
-- entered a state, opened a slot or ended: one notification on channel taskflow_runs per
-- transaction (an empty payload is folded), whoever wrote the lines (a use case, the
-- worker's batches, claim statements in SQL); waiters re-read their own run. Created by
-- migration 2026-12-04T07:40.
CREATE FUNCTION run_moved_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM moved_lines l
              WHERE l.kind IN ('state.entered', 'slot.opened', 'run.completed',
                               'run.cancelled')) THEN
    PERFORM pg_notify('taskflow_runs', '');
  END IF;
  RETURN NULL;
END
$$

-- name: watch_trigger
-- After every statement inserting timeline lines (migration 2026-12-04T07:40).
CREATE TRIGGER audit_event_run_moved AFTER INSERT ON audit_event
REFERENCING NEW TABLE AS moved_lines
FOR EACH STATEMENT EXECUTE FUNCTION run_moved_notify()
