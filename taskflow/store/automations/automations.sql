-- Automations and their once-per-event decisions (store/automations/automations.py,
-- docs/automations.md).

-- name: automation_insert
-- $1 id, $2 workflow, $3 name, $4 document (JSON text), $5 author, $6 now: a draft.
INSERT INTO automation (id, workflow, name, status, version, document, author, created_at, updated_at)
VALUES ($1, $2, $3, 'draft', 0, $4, $5, $6, $6)

-- name: automation_get
-- $1 id.
SELECT id::text AS id, workflow, name, status, version, document, author,
       created_at, updated_at
  FROM automation WHERE id = $1

-- name: automations_of
-- $1 workflow: its automations, oldest first.
SELECT id::text AS id, workflow, name, status, version, document, author,
       created_at, updated_at
  FROM automation WHERE workflow = $1 ORDER BY created_at, id

-- name: automation_status
-- $1 id, $2 new status, $3 bump the version (publishing), $4 now.
UPDATE automation
   SET status = $2, version = version + CASE WHEN $3 THEN 1 ELSE 0 END, updated_at = $4
 WHERE id = $1
RETURNING version

-- name: act_once
-- $1 automation, $2 version, $3 event key, $4 outcome, $5 now: the decision row, or no row
-- when this automation already decided on this event (taken again after a crash).
INSERT INTO automation_act (automation, version, event_key, outcome, at)
VALUES ($1, $2, $3, $4, $5)
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
