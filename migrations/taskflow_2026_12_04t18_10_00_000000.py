"""Automations' timeline position and delay nodes: a queue of the lines automations listen
to (``automation_line``), filled by a statement trigger on the timeline in the statement
that writes them, emptied by the worker in the transaction of each line's decisions; the
index the trigger's lookups read; the actions waiting after a delay node
(``automation_pending``). The lines the old lane had yet to decide are queued. Going
backwards drops them (the old lane's anti-join needs nothing).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-04T18:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "automations' queue of timeline lines, and their waiting actions"

TABLE = 'CREATE TABLE automation_line (line bigint PRIMARY KEY)'
PENDING = 'CREATE TABLE automation_pending ( id bigserial PRIMARY KEY, automation uuid NOT NULL REFERENCES automation (id) ON DELETE CASCADE, version integer NOT NULL, line bigint NOT NULL, run uuid NOT NULL, next_action integer NOT NULL, due_at timestamptz NOT NULL, created_at timestamptz NOT NULL, UNIQUE (automation, line, next_action))'
INDEX = "CREATE INDEX automation_listening ON automation (workflow, ((document -> 'trigger') ->> 'on')) WHERE automation.status = 'published' AND automation.attention = ''"
PENDING_DUE = 'CREATE INDEX automation_pending_due ON automation_pending (due_at, id)'
TRIGGER_OF = "-- The trigger a timeline kind sets off (NULL: none), as core/automations/timeline.py's\n-- KIND_TO_TRIGGER says (a test keeps both the same); migration 2026-12-04T18:10.\nCREATE FUNCTION automation_trigger_of(kind text) RETURNS text\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$\n  SELECT CASE kind\n    WHEN 'slot.opened' THEN 'slot.opened'\n    WHEN 'slot.claimed' THEN 'slot.claimed'\n    WHEN 'slot.satisfied' THEN 'slot.completed'\n    WHEN 'clock.breached' THEN 'slot.breached'\n    WHEN 'clock.at_risk' THEN 'clock.at_risk'\n    WHEN 'state.entered' THEN 'run.state_entered'\n    WHEN 'run.completed' THEN 'run.ended'\n    WHEN 'run.cancelled' THEN 'run.ended'\n    WHEN 'subject.updated' THEN 'subject.changed'\n    WHEN 'event.raised' THEN 'event.raised'\n  END\n$$"
FUNCTION = "-- The trigger function queueing, in the statement that writes them, the timeline lines a\n-- published automation (not flagged) of their run's workflow listens to (migration\n-- 2026-12-04T18:10): the worker decides each queued line once for all its automations\n-- and deletes it in the transaction of those decisions. A queue rather than an id cursor:\n-- line ids are taken at insert, so a line can commit after a later id a cursor had passed.\nCREATE FUNCTION automation_lines() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  -- No automation listening anywhere: one probe of a partial index, nothing written.\n  IF NOT EXISTS (SELECT 1 FROM automation a WHERE a.status = 'published' AND a.attention = '') THEN\n    RETURN NULL;\n  END IF;\n  INSERT INTO automation_line (line)\n  SELECT l.id\n    FROM automation_new_lines l\n    JOIN run r ON r.id = l.run\n   WHERE automation_trigger_of(l.kind) IS NOT NULL\n     AND EXISTS (SELECT 1 FROM automation a\n                  WHERE a.workflow = r.workflow AND a.status = 'published' AND a.attention = ''\n                    AND a.document->'trigger'->>'on' = automation_trigger_of(l.kind));\n  RETURN NULL;\nEND\n$$"
TRIGGER = "-- Every writer of timeline lines inserts into audit_event (the outbox's trigger sees the same).\nCREATE TRIGGER audit_event_automations AFTER INSERT ON audit_event\nREFERENCING NEW TABLE AS automation_new_lines\nFOR EACH STATEMENT EXECUTE FUNCTION automation_lines()"
BACKFILL = "-- Lines published automations had yet to decide (the old lane's anti-join) wait in the queue.\nINSERT INTO automation_line (line)\nSELECT DISTINCT e.id\n  FROM automation a\n  JOIN run r ON r.workflow = a.workflow\n  JOIN audit_event e ON e.run = r.id AND e.at >= a.published_at\n   AND automation_trigger_of(e.kind) = a.document->'trigger'->>'on'\n WHERE a.status = 'published' AND a.attention = ''\n   AND NOT EXISTS (SELECT 1 FROM automation_act x\n                    WHERE x.automation = a.id AND x.event_key = 'line:' || e.id)\nON CONFLICT DO NOTHING"


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(
        ID,
        DESCRIPTION,
        [TABLE, PENDING, INDEX, PENDING_DUE, TRIGGER_OF, FUNCTION, TRIGGER, BACKFILL],
        [
            "DROP TRIGGER IF EXISTS audit_event_automations ON audit_event",
            "DROP FUNCTION IF EXISTS automation_lines()",
            "DROP FUNCTION IF EXISTS automation_trigger_of(text)",
            "DROP INDEX IF EXISTS automation_listening",
            "DROP TABLE IF EXISTS automation_pending",
            "DROP TABLE IF EXISTS automation_line",
        ],
    )
