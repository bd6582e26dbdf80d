-- Workspaces (store/workspaces/workspaces.py, docs/workspaces.md). The workspace table is
-- no workspace's: these run in any.

-- name: create
-- A new workspace named $1 (text) with limits $2 runs, $3 open slots, $4 requests per
-- minute (integers, NULL: none), at $5; no row when the name is taken.
INSERT INTO workspace (name, max_runs, max_open_slots, requests_per_minute, created_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name) DO NOTHING
RETURNING id, name, status, max_runs, max_open_slots, requests_per_minute, created_at

-- name: all
-- Every workspace, by name.
SELECT id, name, status, max_runs, max_open_slots, requests_per_minute, created_at
FROM workspace ORDER BY name

-- name: set_status
-- Workspace $1 (uuid) now $2 ('active' | 'suspended'); its principals' rows touched at $3,
-- so a caller this process presumed (service/access/callers.py) is read again.
WITH changed AS (
    UPDATE workspace SET status = $2 WHERE id = $1
    RETURNING id, name, status, max_runs, max_open_slots, requests_per_minute, created_at
), touched AS (
    UPDATE principal SET updated_at = $3 WHERE workspace = $1 AND EXISTS (SELECT 1 FROM changed)
)
SELECT * FROM changed

-- name: get
-- Workspace $1 (uuid).
SELECT id, name, status, max_runs, max_open_slots, requests_per_minute, created_at
FROM workspace WHERE id = $1

-- name: get_locked
-- Workspace $1 (uuid), its row locked for the transaction (a change of its status).
SELECT id, name, status, max_runs, max_open_slots, requests_per_minute, created_at
FROM workspace WHERE id = $1 FOR UPDATE

-- name: set_limits
-- Workspace $1 (uuid)'s limits: $2 live runs, $3 open slots, $4 requests per minute
-- (integers, NULL: none); its principals' rows touched at $5, as set_status does (a caller
-- carries its workspace's request and slot limits).
WITH changed AS (
    UPDATE workspace SET max_runs = $2, max_open_slots = $3, requests_per_minute = $4
    WHERE id = $1
    RETURNING id, name, status, max_runs, max_open_slots, requests_per_minute, created_at
), touched AS (
    UPDATE principal SET updated_at = $5 WHERE workspace = $1 AND EXISTS (SELECT 1 FROM changed)
)
SELECT * FROM changed
