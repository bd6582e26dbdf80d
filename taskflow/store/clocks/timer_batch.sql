-- A worker batch's reads (store/clocks/timer_batch.py): one statement per table for the whole
-- batch. /*:timer_columns*/ is the timer's columns of t prefixed t_ (timer_rows), and
-- /*:run_columns*/ the run's and its subject's (runs.RUN_COLUMNS), filled at import.

-- name: take_due
-- Up to $2 (int) armed timers due at $1 (timestamptz), oldest first, their runs locked
-- FOR NO KEY UPDATE SKIP LOCKED (a run locked elsewhere is skipped, not waited for). A
-- suspended workspace's timers wait (docs/workspaces.md): due still, they fire on resume.
SELECT t.id, t.run FROM timer t JOIN run r ON r.id = t.run
WHERE t.status = 'armed' AND t.due_at <= $1
  AND NOT EXISTS (SELECT 1 FROM workspace ws WHERE ws.id = t.workspace AND ws.status = 'suspended')
ORDER BY t.due_at, t.id
LIMIT $2
FOR NO KEY UPDATE OF r SKIP LOCKED

-- name: lock_taken
-- The timers $1 (bigint[]) take_due found, locked, with their runs: those still armed and
-- due at $2 (timestamptz) (one cancelled meanwhile is left out), oldest first.
SELECT /*:timer_columns*/, /*:run_columns*/
FROM timer t JOIN run r ON r.id = t.run JOIN subject s ON s.id = r.subject
WHERE t.id = ANY($1::bigint[]) AND t.status = 'armed' AND t.due_at <= $2
ORDER BY t.due_at, t.id
FOR UPDATE OF t

-- name: timers_of_runs
-- Every timer row (any status) of the runs $1 (text[] of ids).
SELECT /*:timer_columns*/ FROM timer t WHERE t.run = ANY($1::text[]::uuid[])
