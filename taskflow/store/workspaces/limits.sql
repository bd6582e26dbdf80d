-- A workspace's limits at the moment of a start or an opening (store/workspaces/limits.py,
-- docs/workspaces.md "Limits"). The workspace row is locked first, the figure counted in a
-- statement of its own after: under READ COMMITTED that count sees every start the lock made
-- it wait for, so two starts at the limit cannot both pass.

-- name: lock_run_limit
-- The workspace of subject $1 (uuid) and its run limit, its row locked; no row when it has
-- no run limit (nothing is locked then).
SELECT w.id, w.max_runs AS allowed FROM workspace w
WHERE w.id = (SELECT s.workspace FROM subject s WHERE s.id = $1) AND w.max_runs IS NOT NULL
FOR UPDATE OF w

-- name: live_runs
-- How many live (active or scheduled) runs workspace $1 (uuid) has.
SELECT count(*) FROM run WHERE workspace = $1 AND status IN ('active', 'scheduled')

-- name: lock_slot_limit
-- The workspace of run $1 (uuid) and its open-slot limit, its row locked; no row when it
-- has none.
SELECT w.id, w.max_open_slots AS allowed FROM workspace w
WHERE w.id = (SELECT r.workspace FROM run r WHERE r.id = $1) AND w.max_open_slots IS NOT NULL
FOR UPDATE OF w

-- name: open_slots
-- How many open slots workspace $1 (uuid) has.
SELECT count(*) FROM slot WHERE workspace = $1 AND status = 'open'

-- name: requests_per_minute
-- Workspace $1 (uuid)'s request limit per minute (NULL: none).
SELECT requests_per_minute FROM workspace WHERE id = $1

-- name: count_request
-- One request of workspace $1 (uuid) in minute $2, counted unless the minute has $3 already:
-- its count after (no row: refused, nothing counted). Every process counts in this one row,
-- so a workspace's requests per minute hold across processes; minutes two before are gone.
WITH gone AS (
  DELETE FROM workspace_request_minute
  WHERE workspace_id = $1 AND minute < $2::timestamptz - interval '2 minutes'
)
INSERT INTO workspace_request_minute AS m (workspace_id, minute, requests) VALUES ($1, $2, 1)
ON CONFLICT (workspace_id, minute) DO UPDATE SET requests = m.requests + 1 WHERE m.requests < $3
RETURNING requests
