-- Automatic steps (store/steps/steps.py): the step rows workers take, their attempts, and
-- what steps.once recorded.

-- name: enqueue_many
-- Steps to run, a batch at once: keys $1, runs $2, visits $3, states $4, kinds $5, action
-- paths $6, due at $7. A key that exists (a replayed firing) adds nothing.
INSERT INTO step (key, run, visit, state, kind, action, status, attempts, due_at,
                  created_at, updated_at)
SELECT u.key, u.run, u.visit, u.state, u.kind, u.action, 'due', 0, u.due, u.due, u.due
FROM unnest($1::text[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[],
            $7::timestamptz[]) AS u(key, run, visit, state, kind, action, due)
ON CONFLICT (key) DO NOTHING

-- name: cancel_left
-- Due steps of runs $1 that their runs left: the run is at visit $2 with status $3 now,
-- a step of another visit (or of a run no longer active) will never run; cancelled at $4.
-- (A running step is left to its worker, which discards its outcome.)
UPDATE step st SET status = 'cancelled', updated_at = $4
FROM unnest($1::uuid[], $2::int[], $3::text[]) AS u(run, visit, status)
WHERE st.run = u.run AND st.status = 'due' AND (st.visit <> u.visit OR u.status <> 'active')

-- name: take
-- Up to $2 steps due at $1 (due, or running with an expired lease), SKIP LOCKED; each
-- starts attempt n+1 under a lease to $1 + $3 seconds, taken by worker $4. The attempt of
-- a lease that ran out is marked lost. Each comes with its run and subject (columns r_*,
-- s_*: what the action is given), whether the run has any slot (whose payloads to read)
-- and the stamp of what was read (see lock_runs_seen).
WITH due AS (
    SELECT st.id, st.status, st.attempts FROM step st
    WHERE st.status IN ('due', 'running') AND st.due_at <= $1
      -- A suspended workspace's steps wait (docs/workspaces.md): taken again on resume.
      AND NOT EXISTS (
          SELECT 1 FROM workspace ws WHERE ws.id = st.workspace AND ws.status = 'suspended'
      )
    ORDER BY st.due_at, st.id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), lost AS (
    UPDATE step_attempt a SET outcome = 'lost', finished_at = $1
    FROM due st
    WHERE st.status = 'running' AND a.step = st.id AND a.attempt = st.attempts
      AND a.outcome = 'running'
), taken AS (
    UPDATE step st
    SET status = 'running', attempts = st.attempts + 1,
        due_at = $1 + make_interval(secs => $3), updated_at = $1
    FROM due d WHERE st.id = d.id
    RETURNING st.id, st.key, st.run, st.visit, st.state, st.kind, st.action, st.attempts,
              st.due_at, st.counted_from
), started AS (
    INSERT INTO step_attempt (step, attempt, worker, started_at, outcome)
    SELECT t.id, t.attempts, $4, $1, 'running' FROM taken t
)
SELECT t.*, x.*
FROM taken t CROSS JOIN LATERAL (  -- by key, each (LIMIT 1: not flattened into a scan of run)
    SELECT r.workflow, r.definition_version, /*:view_columns*/,
           EXISTS (SELECT 1 FROM slot sl WHERE sl.run = r.id) AS has_slots,
           r.xmin::text || ':' || s.xmin::text AS stamp  -- and the count of once_values
    FROM run r JOIN subject s ON s.id = r.subject WHERE r.id = t.run LIMIT 1
) x
ORDER BY t.id

-- name: lock
-- Step $1, locked (after its run: see store/common/locks.py).
SELECT id, key, run, visit, state, kind, action, status, attempts, due_at, counted_from
FROM step WHERE id = $1 FOR UPDATE

-- name: of_runs
-- Every step of runs $1 with its attempts (newest step first; attempts in order).
SELECT s.id, s.key, s.run, s.visit, s.state, s.kind, s.action, s.status, s.attempts,
       s.counted_from, s.due_at, s.result, s.last_error, s.created_at, s.updated_at, s.ended_at,
       COALESCE(
           (SELECT jsonb_agg(jsonb_build_object(
                'attempt', a.attempt, 'worker', a.worker, 'started_at', a.started_at,
                'finished_at', a.finished_at, 'outcome', a.outcome,
                'duration_ms', a.duration_ms, 'error_class', a.error_class,
                'error_message', a.error_message, 'traceback', a.traceback)
                ORDER BY a.attempt)
            FROM step_attempt a WHERE a.step = s.id),
           '[]'::jsonb) AS attempt_list
FROM step s WHERE s.run = ANY($1::uuid[])
ORDER BY s.run, s.id DESC

-- name: reopen
-- An operator retries parked step $1 at $2: due now, the policy's attempts counted anew.
UPDATE step st SET status = 'due', counted_from = attempts, due_at = $2, updated_at = $2
WHERE st.id = $1 AND st.status = 'parked'
RETURNING id, run

-- name: next_due
-- The nearest instant after $1 at which a step falls due (or a lease ends).
SELECT min(st.due_at) AS due FROM step st
WHERE st.status IN ('due', 'running') AND st.due_at > $1

-- name: once_get
-- What steps.once recorded as $2 for run $1.
SELECT result FROM step_once WHERE run = $1::uuid AND name = $2

-- name: once_put
-- Record $3 as $2 for run $1 at $4, unless recorded already; returns the kept value.
WITH put AS (
    INSERT INTO step_once (run, name, result, recorded_at)
    VALUES ($1::uuid, $2, $3::jsonb, $4)
    ON CONFLICT (run, name) DO NOTHING
    RETURNING result, true AS fresh
)
SELECT result, fresh FROM put
UNION ALL
SELECT result, false FROM step_once WHERE run = $1::uuid AND name = $2
LIMIT 1

-- name: once_many
-- What steps.once recorded in hooks: runs $1, names $2, values $3 (JSON text), at $4; a
-- name recorded already adds nothing. Returns how many were added.
WITH put AS (
    INSERT INTO step_once (run, name, result, recorded_at)
    SELECT u.run, u.name, u.value::jsonb, $4 FROM unnest($1::uuid[], $2::text[], $3::text[])
        AS u(run, name, value)
    ON CONFLICT (run, name) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM put

-- name: run_of
-- The run of step $1 (to lock it first).
SELECT run FROM step WHERE id = $1

-- name: wake
-- Wake the workers listening on channel $1 (at commit).
SELECT pg_notify($1, '')

-- name: lock_runs
-- Lock runs $1 in id order (the first step of the lock order, for a batch of steps) and
-- read them with their subjects (columns r_*, s_*), as get_run_locked does for one run:
-- each by key, in id order (LIMIT 1: not flattened into a scan of run).
SELECT x.*
FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS u(id) ORDER BY id) u
CROSS JOIN LATERAL (
    SELECT /*:view_columns*/ FROM run r JOIN subject s ON s.id = r.subject
    WHERE r.id = u.id LIMIT 1 FOR NO KEY UPDATE OF r
) x
ORDER BY u.id

-- name: lock_runs_seen
-- Lock runs $1 in id order, as lock_runs, and say for each (columns id, stamp) which row
-- versions it has now: the run's and its subject's (xmin: any update of the row makes a
-- new version) and how many values steps.once recorded for it (written without touching
-- the run). A stamp equal to the one read with the run earlier (by take) means the run and
-- subject read then are the ones locked now.
SELECT x.*
FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS u(id) ORDER BY id) u
CROSS JOIN LATERAL (
    SELECT r.id, r.xmin::text || ':' || s.xmin::text || ':'
               || (SELECT count(*) FROM step_once o WHERE o.run = r.id) AS stamp
    FROM run r JOIN subject s ON s.id = r.subject
    WHERE r.id = u.id LIMIT 1 FOR NO KEY UPDATE OF r
) x
ORDER BY u.id

-- name: lock_many
-- Steps $1, locked in id order (after their runs and live slots): what the finish checks.
SELECT id, status, attempts FROM step WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE

-- name: finish_many
-- A batch of finished attempts in one statement. How they ended: steps $1, attempts $2,
-- outcomes $3, ms $4, error classes $5, messages $6, tracebacks $7; ended at $8. The steps
-- they settle: ids $9 become statuses $10, due at $11 (null: unchanged), with results $12
-- (JSON text, null: unchanged) and last errors $13 (null: unchanged). Runs $14 keep results
-- $16 (JSON text) of their automatic states $15.
WITH attempts AS (
    UPDATE step_attempt a
    SET finished_at = $8::timestamptz, outcome = u.outcome, duration_ms = u.ms,
        error_class = u.cls, error_message = u.msg, traceback = u.trace
    FROM unnest($1::bigint[], $2::int[], $3::text[], $4::int[], $5::text[], $6::text[],
                $7::text[]) AS u(step, attempt, outcome, ms, cls, msg, trace)
    WHERE a.step = u.step AND a.attempt = u.attempt
), settled AS (
    UPDATE step st
    SET status = u.status, due_at = COALESCE(u.due, st.due_at),
        result = COALESCE(u.result::jsonb, st.result), last_error = COALESCE(u.err, st.last_error),
        updated_at = $8::timestamptz,
        ended_at = CASE WHEN u.status IN ('succeeded', 'failed', 'cancelled')
                        THEN $8::timestamptz END
    FROM unnest($9::bigint[], $10::text[], $11::timestamptz[], $12::text[], $13::text[])
         AS u(id, status, due, result, err)
    WHERE st.id = u.id
)
UPDATE run r SET step_results = r.step_results || jsonb_build_object(u.state, u.result::jsonb)
FROM unnest($14::uuid[], $15::text[], $16::text[]) AS u(run, state, result)
WHERE r.id = u.run

-- name: release
-- Steps $1 whose attempts $2 this worker still runs, due again at $3: a worker that stops
-- hands them back at once instead of at its leases' end (the next taker marks them lost).
UPDATE step st SET due_at = $3, updated_at = $3
FROM unnest($1::bigint[], $2::int[]) AS mine(id, attempt)
WHERE st.id = mine.id AND st.attempts = mine.attempt AND st.status = 'running'
  AND st.due_at > $3
