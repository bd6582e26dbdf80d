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

-- name: automation_due_lines
-- $1 timeline kinds, $2 the trigger of each kind, $3 at most: timeline lines that a
-- published automation (not flagged) listens to, written since it was published, on
-- which it has not decided yet, oldest first.
SELECT a.id::text AS automation, a.version, a.document, e.id AS line_id, e.kind, e.at,
       e.actor, e.details,
       e.run::text AS run_id, r.subject::text AS subject_id, s.attributes AS subject,
       sl.name AS slot
  FROM automation a
  JOIN unnest($1::text[], $2::text[]) AS k(kind, trig) ON k.trig = a.document->'trigger'->>'on'
  JOIN run r ON r.workflow = a.workflow
  JOIN audit_event e ON e.run = r.id AND e.kind = k.kind AND e.at >= a.published_at
  JOIN subject s ON s.id = r.subject
  LEFT JOIN slot sl ON sl.id = e.slot
 WHERE a.status = 'published' AND a.attention = ''
   AND NOT EXISTS (SELECT 1 FROM automation_act x
                    WHERE x.automation = a.id AND x.event_key = 'line:' || e.id)
 ORDER BY e.id, a.id
 LIMIT $3

-- name: automation_last_line
-- $1 run: its newest timeline line's id (0: none), before an automation's actions.
SELECT coalesce(max(id), 0) FROM audit_event WHERE run = $1

-- name: automation_stamp_lines
-- $1 run, $2 actor, $3 lines after this id, $4 stamp: the lines an automation's actions
-- just wrote name the automation, its version, the enrolling event and their depth.
UPDATE audit_event SET details = coalesce(details, '{}'::jsonb) || $4::jsonb
 WHERE run = $1 AND actor = $2 AND id > $3

-- name: automation_open_slot
-- $1 run, $2 slot name: the live slot of that name on the run.
SELECT id::text FROM slot WHERE run = $1 AND name = $2 AND status IN ('open', 'claimed', 'pending')
 ORDER BY id LIMIT 1

-- name: automation_skips
-- $1 automations, $2 versions, $3 event keys, $4 subjects, $5 the events' instants, $6 now:
-- skip decisions of a batch, in one statement (a decision already there stays).
INSERT INTO automation_act (automation, version, event_key, outcome, at, subject, event_at)
SELECT a, v, k, 'skip', $6, s, e
  FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS x(a, v, k, s, e)
ON CONFLICT (automation, event_key) DO NOTHING

-- name: automation_delete
-- $1 id: the automation and its decision rows go; the lines it wrote stay on the timelines.
DELETE FROM automation WHERE id = $1
