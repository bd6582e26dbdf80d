-- Timer rows as an admin sees and mends them (store/clocks/timer_admin.py). /*:timer_columns*/
-- is a timer's columns (deadlines.timer_columns). A change locks the run, then the timer.

-- name: listing
-- Up to $5 timers after id $4 in id order: statuses $1 (text[], NULL: any), run $2 (uuid,
-- NULL: any), of runs of workflows $3 (text[], NULL: any).
SELECT /*:timer_columns*/ FROM timer t
WHERE ($1::text[] IS NULL OR t.status = ANY($1::text[]))
  AND ($2::uuid IS NULL OR t.run = $2::uuid)
  AND ($3::text[] IS NULL OR t.run IN (SELECT id FROM run WHERE workflow = ANY($3)))
  AND t.id > $4
ORDER BY t.id LIMIT $5

-- name: listing_count
-- How many timers listing matches ($1..$3 as there).
SELECT count(*) FROM timer t
WHERE ($1::text[] IS NULL OR t.status = ANY($1::text[]))
  AND ($2::uuid IS NULL OR t.run = $2::uuid)
  AND ($3::text[] IS NULL OR t.run IN (SELECT id FROM run WHERE workflow = ANY($3)))

-- name: workflow_of
-- The workflow of timer $1's (bigint) run.
SELECT r.workflow FROM timer t JOIN run r ON r.id = t.run WHERE t.id = $1

-- name: get
-- Timer $1 (bigint).
SELECT /*:timer_columns*/ FROM timer t WHERE t.id = $1

-- name: run_of
-- The run of timer $1 (bigint).
SELECT run FROM timer WHERE id = $1

-- name: lock_run
-- Lock run $1 (uuid) first (the lock order).
SELECT 1 FROM run WHERE id = $1 FOR NO KEY UPDATE

-- name: lock
-- Timer $1 (bigint), locked.
SELECT /*:timer_columns*/ FROM timer t WHERE t.id = $1 FOR UPDATE

-- name: rearm
-- Arm timer $1 (bigint) again with status $2 ('armed'), due $3 (also its update time),
-- failures forgotten; notify channel $4 (the workers wake at commit).
WITH t AS (
    UPDATE timer SET status = $2, due_at = $3, attempts = 0,
                     planned_at = COALESCE(planned_at, due_at), updated_at = $3
    WHERE id = $1
    RETURNING *
)
SELECT /*:timer_columns*/, pg_notify($4, '') FROM t

-- name: set_status
-- Give timer $1 (bigint) status $2 at $3.
WITH t AS (UPDATE timer SET status = $2, updated_at = $3 WHERE id = $1 RETURNING *)
SELECT /*:timer_columns*/ FROM t

-- name: reschedule
-- Arm timer $1 (bigint) with status $2 ('armed') due at $3 as if planned so, at $4,
-- failures forgotten; notify channel $5.
WITH t AS (
    UPDATE timer SET status = $2, due_at = $3, attempts = 0, planned_at = NULL,
                     updated_at = $4
    WHERE id = $1
    RETURNING *
)
SELECT /*:timer_columns*/, pg_notify($5, '') FROM t
