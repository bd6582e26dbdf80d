-- State spans and the timeline lines a history reads (store/history/spans.py).

-- name: spans_function
-- The trigger function state_spans (migration 2026-12-04T08:45, schema_extras.EXTRA_FUNCTIONS):
-- for each new timeline line that changes where a run is, in line order, keep the run's
-- effective visits (core/history/visits.py, the same rules): an entry closes the standing
-- span and opens one; a cancellation closes it; an undo (details.reverses names the entry it
-- rewinds) marks that span undone and reopens the one it had closed; a redo (reverses names
-- an undo's line) closes the standing span and shows the undone one again. Rows are locked in
-- the order of the run's other rows hanging off it (the writer holds the run).
CREATE FUNCTION state_spans() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l record;
  hidden state_span;
BEGIN
  FOR l IN SELECT n.id, n.run, n.kind, n.at, n.details FROM state_lines n
            WHERE n.kind IN ('state.entered', 'run.cancelled') ORDER BY n.id LOOP
    IF l.kind = 'run.cancelled' OR l.details->>'reverses' IS NULL THEN
      UPDATE state_span SET left_at = l.at
       WHERE run = l.run AND left_at = 'infinity' AND undone_by IS NULL;
      IF l.kind = 'state.entered' THEN
        INSERT INTO state_span (run, workflow, state, entered_at, left_at, line)
        SELECT l.run, r.workflow, l.details->>'state', l.at, 'infinity', l.id
          FROM run r WHERE r.id = l.run;
      END IF;
    ELSE
      SELECT * INTO hidden FROM state_span
       WHERE run = l.run AND line = (l.details->>'reverses')::bigint AND undone_by IS NULL;
      IF FOUND THEN
        UPDATE state_span SET undone_by = l.id WHERE id = hidden.id;
        UPDATE state_span SET left_at = 'infinity'
         WHERE id = (SELECT s.id FROM state_span s
                      WHERE s.run = l.run AND s.undone_by IS NULL AND s.left_at = hidden.entered_at
                      ORDER BY s.id DESC LIMIT 1);
      ELSE
        SELECT * INTO hidden FROM state_span
         WHERE run = l.run AND undone_by = (l.details->>'reverses')::bigint;
        IF FOUND THEN
          UPDATE state_span SET left_at = hidden.entered_at
           WHERE run = l.run AND left_at = 'infinity' AND undone_by IS NULL;
          UPDATE state_span SET undone_by = NULL WHERE id = hidden.id;
        END IF;
      END IF;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$

-- name: spans_trigger
-- Every writer of timeline lines inserts into audit_event: the spans follow in the same
-- statement, so in the same transaction as the decision.
CREATE TRIGGER audit_event_state_spans AFTER INSERT ON audit_event
REFERENCING NEW TABLE AS state_lines
FOR EACH STATEMENT EXECUTE FUNCTION state_spans()

-- name: backfill
-- The spans of the lines written before the trigger existed (the migration): the literal
-- entries, each closed by the run's next entry or its cancellation (no undo existed).
INSERT INTO state_span (run, workflow, state, entered_at, left_at, line)
SELECT e.run, r.workflow, e.details->>'state', e.at,
       coalesce(lead(e.at) OVER (PARTITION BY e.run ORDER BY e.id), 'infinity'), e.id
  FROM audit_event e JOIN run r ON r.id = e.run
 WHERE e.kind IN ('state.entered', 'run.cancelled')
 ORDER BY e.run, e.id

-- name: backfill_drop_cancelled
-- ... the rows the backfill made of cancellations are only the end of the span before.
DELETE FROM state_span s USING audit_event e WHERE e.id = s.line AND e.kind = 'run.cancelled'

-- name: run_lines
-- The lines of run $1 that change where it is (core/history/visits.KINDS), in order.
SELECT id, kind, at, actor, details FROM audit_event
 WHERE run = $1 AND kind IN ('state.entered', 'run.cancelled')
 ORDER BY id

-- name: state_counts
-- Runs of workflow $1 in each state at instant $2 (effective visits), with the definition
-- version the run is on now; index state_span_workflow_during.
SELECT s.state, count(*) AS runs
  FROM state_span s
 WHERE s.workflow = $1 AND s.left_at > $2 AND s.entered_at <= $2 AND s.undone_by IS NULL
 GROUP BY s.state
 ORDER BY s.state

-- name: state_at_raw
-- The runs of workflow $1 in state $2 at instant $3, as the runs filter asks it (bench);
-- index state_span_state_during.
SELECT s.run FROM state_span s
 WHERE s.workflow = $1 AND s.state = $2 AND s.left_at > $3 AND s.entered_at <= $3
   AND s.undone_by IS NULL

-- name: undo_lines
-- What deciding an undo of the runs $1 (uuid[]) reads (core/history/undo.py): their
-- entries, their moves, and the lines after which a change reached beyond a run, in order
-- by run (one statement for a page of runs' Run.undoable).
SELECT run, id, kind, at, actor, details FROM audit_event
 WHERE run = ANY($1::uuid[])
   AND kind IN ('state.entered', 'run.moved', 'child.started', 'run.child_started', 'link.used')
 ORDER BY run, id
