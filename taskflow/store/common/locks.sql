-- The lock order's own statements (store/common/locks.py; docs/architecture.md, "Lock order").

-- name: lock_run
-- The run $1 (uuid) locked FOR NO KEY UPDATE, the first lock of every writer; no row
-- when there is no such run.
SELECT true FROM run WHERE id = $1 FOR NO KEY UPDATE

-- name: lock_live_slots
-- The live slots of the (locked) runs $1 (uuid[]) locked in id order: the second step.
SELECT 1 FROM slot WHERE run = ANY($1::uuid[])
AND status IN ('pending', 'open', 'claimed') ORDER BY id FOR UPDATE
