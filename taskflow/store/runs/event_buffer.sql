-- Events kept for a run until a slot waits for them (store/runs/event_buffer.py). Reads go by
-- run (index event_buffer_run) or by expiry (event_buffer_expires_at); writers hold the
-- run's row lock.

-- name: of_run
-- Run $1's (uuid) kept events in arrival order.
SELECT id, run, event, payload, slot_name, item, actor, arrived_at, expires_at
FROM event_buffer WHERE run = $1 ORDER BY id

-- name: insert
-- Keep event $2 for run $1 (uuid): payload $3 (jsonb), slot name $4, item $5 (jsonb),
-- actor $6, arrived at $7, expires at $8.
INSERT INTO event_buffer (run, event, payload, slot_name, item, actor, arrived_at, expires_at)
VALUES ($1, $2, $3::jsonb, $4, $5::jsonb, $6, $7, $8)
RETURNING id, run, event, payload, slot_name, item, actor, arrived_at, expires_at

-- name: expired_runs
-- Up to $2 runs keeping an event past its time at $1.
SELECT DISTINCT run FROM (
    SELECT run FROM event_buffer WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
) due

-- name: lock_runs
-- Lock runs $1 (uuid[]) in id order (the lock order), skipping those locked elsewhere.
SELECT id FROM run WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED

-- name: delete
-- Drop kept event $1 (bigint).
DELETE FROM event_buffer WHERE id = $1
