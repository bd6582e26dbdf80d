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
