-- Automations and their once-per-event decisions (store/automations/automations.py,
-- docs/automations.md).

-- name: automation_insert
-- $1 id, $2 workflow, $3 name, $4 document (JSON text), $5 author, $6 now: a draft.
INSERT INTO automation (id, workflow, name, status, version, document, author, created_at, updated_at)
VALUES ($1, $2, $3, 'draft', 0, $4, $5, $6, $6)

-- name: automation_get
-- $1 id.
SELECT id::text AS id, workflow, name, status, version, document, author,
       created_at, updated_at, attention
  FROM automation WHERE id = $1

-- name: automations_of
-- $1 workflow: its automations, oldest first.
SELECT id::text AS id, workflow, name, status, version, document, author,
       created_at, updated_at, attention
  FROM automation WHERE workflow = $1 ORDER BY created_at, id

-- name: automation_status
-- $1 id, $2 new status, $3 bump the version (publishing), $4 now.
UPDATE automation
   SET status = $2::text, version = version + CASE WHEN $3 THEN 1 ELSE 0 END, updated_at = $4,
       published_at = CASE WHEN $2::text = 'published' THEN $4 ELSE published_at END,
       attention = CASE WHEN $2::text = 'published' THEN '' ELSE attention END
 WHERE id = $1
RETURNING version

-- name: act_once
-- $1 automation, $2 version, $3 event key, $4 outcome, $5 now, $6 subject, $7 the event's
-- instant: the decision row, or no row when this automation already decided on this event
-- (taken again after a crash).
INSERT INTO automation_act (automation, version, event_key, outcome, at, subject, event_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (automation, event_key) DO NOTHING
RETURNING id

-- name: recorded_lines
-- $1 workflow, $2 from, $3 until, $4 timeline kinds, $5 at most: the timeline lines of
-- the workflow's runs a simulation plays, oldest first, with the subject as it is now and
-- the slot's name.
SELECT e.id, e.kind, e.at, e.actor, e.details, e.run::text AS run_id,
       r.subject::text AS subject_id, s.attributes AS subject, sl.name AS slot
  FROM audit_event e
  JOIN run r ON r.id = e.run
  JOIN subject s ON s.id = r.subject
  LEFT JOIN slot sl ON sl.id = e.slot
 WHERE r.workflow = $1 AND e.at >= $2 AND e.at <= $3 AND e.kind = ANY($4::text[])
 ORDER BY e.at, e.id
 LIMIT $5


-- name: automation_lock
-- $1 id: the automation, locked while the worker decides one event for it (one decision
-- of one automation at a time: the enrollment memory stays true).
SELECT id::text AS id, workflow, name, status, version, document, author,
       created_at, updated_at, attention
  FROM automation WHERE id = $1
   FOR UPDATE

-- name: automation_decided
-- $1 automation, $2 event key: whether it already decided on that event.
SELECT EXISTS (SELECT 1 FROM automation_act WHERE automation = $1 AND event_key = $2)

-- name: automation_last_enrolled
-- $1 automation, $2 subject: when the subject last set it off (the enrollment memory).
SELECT max(event_at) FROM automation_act
 WHERE automation = $1 AND subject = $2 AND outcome = 'act'

-- name: automation_flag
-- $1 id, $2 why, $3 now, $4 the run whose event it stopped on: the automation stops acting and is shown as needing attention.
UPDATE automation SET attention = $2, updated_at = $3, attention_run = $4 WHERE id = $1

-- name: automation_last_line
-- $1 run: its newest timeline line's id (0: none), before an automation's actions.
SELECT coalesce(max(id), 0) FROM audit_event WHERE run = $1

-- name: automation_stamp_lines
-- $1 run, $2 actor, $3 lines after this id, $4 stamp: the lines an automation's actions
-- just wrote name the automation, its version, the enrolling event and their depth; the
-- engine's own lines (no actor: a slot satisfied by a raised event, the state it entered)
-- too, so an automation set off by them sees the depth (the use cases lock the run).
UPDATE audit_event SET details = coalesce(details, '{}'::jsonb) || $4::jsonb
 WHERE run = $1 AND (actor = $2 OR actor IS NULL) AND id > $3

-- name: automation_open_slot
-- $1 run, $2 slot name: the live slot of that name on the run.
SELECT id::text FROM slot WHERE run = $1 AND name = $2 AND status IN ('open', 'claimed', 'pending')
 ORDER BY id LIMIT 1

-- name: automation_delete
-- $1 id: the automation and its decision rows go; the lines it wrote stay on the timelines.
DELETE FROM automation WHERE id = $1

-- name: automation_trigger_of_function
-- The trigger a timeline kind sets off (NULL: none), as core/automations/timeline.py's
-- KIND_TO_TRIGGER says (a test keeps both the same); migration 2026-12-04T18:10, replaced by
-- 2026-12-04T18:20 (clock.forecast_at_risk).
CREATE FUNCTION automation_trigger_of(kind text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE kind
    WHEN 'slot.opened' THEN 'slot.opened'
    WHEN 'slot.claimed' THEN 'slot.claimed'
    WHEN 'slot.satisfied' THEN 'slot.completed'
    WHEN 'clock.breached' THEN 'slot.breached'
    WHEN 'clock.at_risk' THEN 'clock.at_risk'
    WHEN 'clock.forecast_at_risk' THEN 'clock.forecast_at_risk'
    WHEN 'state.entered' THEN 'run.state_entered'
    WHEN 'run.completed' THEN 'run.ended'
    WHEN 'run.cancelled' THEN 'run.ended'
    WHEN 'subject.updated' THEN 'subject.changed'
    WHEN 'event.raised' THEN 'event.raised'
  END
$$

-- name: automation_lines_function
-- The trigger function queueing, in the statement that writes them, the timeline lines a
-- published automation (not flagged) of their run's workflow listens to (migration
-- 2026-12-04T18:10): the worker decides each queued line once for all its automations
-- and deletes it in the transaction of those decisions. A queue rather than an id cursor:
-- line ids are taken at insert, so a line can commit after a later id a cursor had passed.
CREATE FUNCTION automation_lines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- No automation listening anywhere: one probe of a partial index, nothing written.
  IF NOT EXISTS (SELECT 1 FROM automation a WHERE a.status = 'published' AND a.attention = '') THEN
    RETURN NULL;
  END IF;
  INSERT INTO automation_line (line)
  SELECT l.id
    FROM automation_new_lines l
    JOIN run r ON r.id = l.run
   WHERE automation_trigger_of(l.kind) IS NOT NULL
     AND EXISTS (SELECT 1 FROM automation a
                  WHERE a.workflow = r.workflow AND a.status = 'published' AND a.attention = ''
                    AND a.document->'trigger'->>'on' = automation_trigger_of(l.kind));
  RETURN NULL;
END
$$

-- name: automation_lines_trigger
-- Every writer of timeline lines inserts into audit_event (the outbox's trigger sees the same).
CREATE TRIGGER audit_event_automations AFTER INSERT ON audit_event
REFERENCING NEW TABLE AS automation_new_lines
FOR EACH STATEMENT EXECUTE FUNCTION automation_lines()

-- name: automation_queued_lines
-- $1 at most: queued lines (locked, SKIP LOCKED: one worker each), oldest first, with their
-- run's workflow (NULL: the line is gone).
WITH taken AS (
  SELECT q.line FROM automation_line q ORDER BY q.line LIMIT $1 FOR UPDATE SKIP LOCKED
)
SELECT t.line AS line_id, e.kind, e.at, e.actor, e.details, e.run::text AS run_id,
       r.workflow, r.subject::text AS subject_id, s.attributes AS subject, sl.name AS slot
  FROM taken t
  LEFT JOIN audit_event e ON e.id = t.line
  LEFT JOIN run r ON r.id = e.run
  LEFT JOIN subject s ON s.id = r.subject
  LEFT JOIN slot sl ON sl.id = e.slot
 ORDER BY t.line

-- name: automations_listening
-- $1 workflows: their published automations (not flagged), each with its trigger and when
-- it was published, in id order (the lock order).
SELECT a.id::text AS id, a.workflow, a.version, a.document, a.published_at,
       a.document->'trigger'->>'on' AS trigger
  FROM automation a
 WHERE a.workflow = ANY($1::text[]) AND a.status = 'published' AND a.attention = ''
 ORDER BY a.id

-- name: automation_take_line
-- $1 line: the queued line, locked for its decisions (no row: another worker has it, or
-- it was decided).
SELECT line FROM automation_line WHERE line = $1 FOR UPDATE SKIP LOCKED

-- name: automation_lines_done
-- $1 lines: decided for every automation; off the queue.
DELETE FROM automation_line WHERE line = ANY($1::bigint[])

-- name: automation_lines_queued
-- How many lines wait for their automations' decisions (benches, metrics).
SELECT count(*) FROM automation_line

-- name: automation_subject
-- $1 subject id: its type, external id and fields as they are now (set_field, start_run).
SELECT type, external_id, attributes FROM subject WHERE id = $1

-- name: automation_pending_insert
-- $1 automation, $2 version, $3 enrolling line, $4 run, $5 the next action's index, $6 due,
-- $7 now: the actions after a delay node wait (once per automation, line and action).
INSERT INTO automation_pending (automation, version, line, run, next_action, due_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (automation, line, next_action) DO NOTHING

-- name: automation_pending_due
-- $1 now, $2 at most: waiting actions whose delay ended, soonest first.
SELECT id FROM automation_pending WHERE due_at <= $1 ORDER BY due_at, id LIMIT $2

-- name: automation_pending_take
-- $1 id: the waiting actions, locked while the worker does them (no row: another worker
-- has them, or they were done).
SELECT p.id, p.automation::text AS automation, p.version, p.next_action, p.created_at,
       e.id AS line_id, e.kind, e.at, e.actor, e.details, e.run::text AS run_id,
       r.workflow, r.subject::text AS subject_id, s.attributes AS subject, sl.name AS slot
  FROM automation_pending p
  JOIN audit_event e ON e.id = p.line
  JOIN run r ON r.id = e.run
  JOIN subject s ON s.id = r.subject
  LEFT JOIN slot sl ON sl.id = e.slot
 WHERE p.id = $1
   FOR UPDATE OF p SKIP LOCKED

-- name: automation_pending_done
-- $1 id: done (or dropped), in the transaction of its actions.
DELETE FROM automation_pending WHERE id = $1

-- name: automation_pending_recheck
-- $1 id, $2 when to look again: a wait node whose condition does not hold yet.
UPDATE automation_pending SET due_at = $2 WHERE id = $1

-- name: automation_webhook
-- $1 run, $2 actor, $3 details (the automation's stamp, the endpoint, the message), $4 now,
-- $5 endpoint: an automation.webhook line, its outbox event (type automation.webhook) and
-- one delivery to the endpoint, in one statement (the delivery worker sends it, with the
-- endpoint's signing and address rules); the delivery's id.
WITH line AS (
  INSERT INTO audit_event (run, kind, actor, details, at)
  VALUES ($1, 'automation.webhook', $2, $3::jsonb, $4)
  RETURNING id, run, at, details
), event AS (
  INSERT INTO outbox_event (type, line, kind, run, slot, slot_name, workflow, workflow_version,
                            subject_type, subject_external_id, actor, reason, details,
                            occurred_at)
  SELECT 'automation.webhook', l.id, 'automation.webhook', l.run, NULL, NULL, r.workflow,
         r.definition_version, j.type, j.external_id, $2, NULL, l.details, l.at
    FROM line l JOIN run r ON r.id = l.run JOIN subject j ON j.id = r.subject
  RETURNING id, run, occurred_at
), sent AS (
  INSERT INTO webhook_delivery (event, endpoint, run, next_at, created_at, since)
  SELECT v.id, $5, v.run, v.occurred_at, v.occurred_at, v.occurred_at FROM event v
  RETURNING id
)
SELECT id, pg_notify('taskflow_webhooks', '') FROM sent
