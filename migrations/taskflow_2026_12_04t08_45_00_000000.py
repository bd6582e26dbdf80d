"""State spans: each run's effective visits of its states (``state_span``), kept by a trigger
on the timeline (``state_spans``), so "which runs were in S at T" and the counts per state at
an instant are index reads (docs/history.md). The spans of the existing timeline are filled
from its ``state.entered`` and ``run.cancelled`` lines."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T08:45:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "state spans"

CREATE = (
    'CREATE TABLE "state_span" ("id" BIGSERIAL PRIMARY KEY NOT NULL, "run" UUID NOT NULL REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, "workflow" VARCHAR(100) NOT NULL DEFAULT \'\', "state" VARCHAR(100) NOT NULL DEFAULT \'\', "entered_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "left_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "line" BIGINT NOT NULL DEFAULT 0, "undone_by" BIGINT DEFAULT null)',
    "CREATE INDEX state_span_state_during ON state_span (workflow, state, left_at, entered_at) INCLUDE (run) WHERE undone_by IS NULL",
    "CREATE INDEX state_span_workflow_during ON state_span (workflow, left_at, entered_at) INCLUDE (state) WHERE undone_by IS NULL",
    "CREATE UNIQUE INDEX state_span_open ON state_span (run) WHERE left_at = 'infinity' AND undone_by IS NULL",
    "CREATE INDEX state_span_line ON state_span (run, line)",
)
FUNCTION = "-- The trigger function state_spans (migration 2026-12-04T08:45, schema_extras.EXTRA_FUNCTIONS):\n-- for each new timeline line that changes where a run is, in line order, keep the run's\n-- effective visits (core/history/visits.py, the same rules): an entry closes the standing\n-- span and opens one; a cancellation closes it; an undo (details.reverses names the entry it\n-- rewinds) marks that span undone and reopens the one it had closed; a redo (reverses names\n-- an undo's line) closes the standing span and shows the undone one again. Rows are locked in\n-- the order of the run's other rows hanging off it (the writer holds the run).\nCREATE FUNCTION state_spans() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  l record;\n  hidden state_span;\nBEGIN\n  FOR l IN SELECT n.id, n.run, n.kind, n.at, n.details FROM state_lines n\n            WHERE n.kind IN ('state.entered', 'run.cancelled') ORDER BY n.id LOOP\n    IF l.kind = 'run.cancelled' OR l.details->>'reverses' IS NULL THEN\n      UPDATE state_span SET left_at = l.at\n       WHERE run = l.run AND left_at = 'infinity' AND undone_by IS NULL;\n      IF l.kind = 'state.entered' THEN\n        INSERT INTO state_span (run, workflow, state, entered_at, left_at, line)\n        SELECT l.run, r.workflow, l.details->>'state', l.at, 'infinity', l.id\n          FROM run r WHERE r.id = l.run;\n      END IF;\n    ELSE\n      SELECT * INTO hidden FROM state_span\n       WHERE run = l.run AND line = (l.details->>'reverses')::bigint AND undone_by IS NULL;\n      IF FOUND THEN\n        UPDATE state_span SET undone_by = l.id WHERE id = hidden.id;\n        UPDATE state_span SET left_at = 'infinity'\n         WHERE id = (SELECT s.id FROM state_span s\n                      WHERE s.run = l.run AND s.undone_by IS NULL AND s.left_at = hidden.entered_at\n                      ORDER BY s.id DESC LIMIT 1);\n      ELSE\n        SELECT * INTO hidden FROM state_span\n         WHERE run = l.run AND undone_by = (l.details->>'reverses')::bigint;\n        IF FOUND THEN\n          UPDATE state_span SET left_at = hidden.entered_at\n           WHERE run = l.run AND left_at = 'infinity' AND undone_by IS NULL;\n          UPDATE state_span SET undone_by = NULL WHERE id = hidden.id;\n        END IF;\n      END IF;\n    END IF;\n  END LOOP;\n  RETURN NULL;\nEND\n$$"
TRIGGER = "-- Every writer of timeline lines inserts into audit_event: the spans follow in the same\n-- statement, so in the same transaction as the decision.\nCREATE TRIGGER audit_event_state_spans AFTER INSERT ON audit_event\nREFERENCING NEW TABLE AS state_lines\nFOR EACH STATEMENT EXECUTE FUNCTION state_spans()"
BACKFILL = (
    "-- The spans of the lines written before the trigger existed (the migration): the literal\n-- entries, each closed by the run's next entry or its cancellation (no undo existed).\nINSERT INTO state_span (run, workflow, state, entered_at, left_at, line)\nSELECT e.run, r.workflow, e.details->>'state', e.at,\n       coalesce(lead(e.at) OVER (PARTITION BY e.run ORDER BY e.id), 'infinity'), e.id\n  FROM audit_event e JOIN run r ON r.id = e.run\n WHERE e.kind IN ('state.entered', 'run.cancelled')\n ORDER BY e.run, e.id",
    "-- ... the rows the backfill made of cancellations are only the end of the span before.\nDELETE FROM state_span s USING audit_event e WHERE e.id = s.line AND e.kind = 'run.cancelled'",
)
DROP = (
    "DROP TRIGGER IF EXISTS audit_event_state_spans ON audit_event",
    "DROP FUNCTION IF EXISTS state_spans()",
    'DROP TABLE IF EXISTS "state_span"',
)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, [*CREATE, FUNCTION, TRIGGER, *BACKFILL], DROP)
