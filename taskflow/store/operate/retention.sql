-- Statements of store/operate/retention.py: pruning ended runs (docs/operations.md, "Retention").

-- name: due_runs
-- Up to $3 ended runs of workflow $1 that ended before $2, oldest end first, locked
-- (others skipped: another worker prunes them), whose opened slots all carry stored
-- report measures (the rest wait for them: `taskflow measure-slots`). Index
-- run_workflow_ended.
SELECT r.id, r.subject, r.ended_at FROM run r
WHERE r.ended_at < $2 AND r.ended_at IS NOT NULL AND r.workflow = $1
  AND r.status IN ('completed', 'cancelled')
  AND NOT EXISTS (SELECT 1 FROM slot s WHERE s.run = r.id AND s.opened_at IS NOT NULL
                  AND s.measured_clock IS NULL)
ORDER BY r.ended_at, r.id
LIMIT $3
FOR UPDATE OF r SKIP LOCKED

-- name: counts
-- What goes with runs $1 (uuid[]): slots, timeline lines, notifications, links, timers.
SELECT (SELECT count(*) FROM slot WHERE run = ANY($1::uuid[])) AS slots,
       (SELECT count(*) FROM audit_event WHERE run = ANY($1::uuid[])) AS timeline,
       (SELECT count(*) FROM notification WHERE run = ANY($1::uuid[])) AS notifications,
       (SELECT count(*) FROM magic_link WHERE run = ANY($1::uuid[])) AS links,
       (SELECT count(*) FROM timer WHERE run = ANY($1::uuid[])) AS timers

-- name: keep_measures
-- The report measures of the opened slots of runs $1 (uuid[]), kept as pruned_slot rows
-- at $2 (the columns the SLA report reads of an ended, measured slot).
INSERT INTO pruned_slot (id, run, workflow, version, state, name, status, audience, holder,
                         satisfied_by, priority, opened_at, satisfied_at, cancelled_at,
                         measured_clock, pickup_biz_us, pickup_real_us, done_biz_us,
                         done_real_us, worked_us, clock_met, breach_from, pruned_at)
SELECT s.id, s.run, s.workflow, s.version, s.state, s.name, s.status, s.audience, s.holder,
       s.satisfied_by, s.priority, s.opened_at, s.satisfied_at, s.cancelled_at,
       s.measured_clock, s.pickup_biz_us, s.pickup_real_us, s.done_biz_us, s.done_real_us,
       s.worked_us, s.clock_met, s.breach_from, $2
FROM slot s
WHERE s.run = ANY($1::uuid[]) AND s.opened_at IS NOT NULL AND s.measured_clock IS NOT NULL
ON CONFLICT (id) DO NOTHING

-- name: delete_runs
-- Runs $1 (uuid[]) and, by their foreign keys' cascade, their slots, clocks, timeline,
-- timers, notifications, magic links and kept events.
DELETE FROM run WHERE id = ANY($1::uuid[])

-- name: delete_subjects
-- Subjects $1 (uuid[]) that no run tracks any more; one a start is using right now (it
-- locks the subject) is skipped and stays.
WITH gone AS (
  DELETE FROM subject WHERE id IN (
    SELECT s.id FROM subject s WHERE s.id = ANY($1::uuid[])
      AND NOT EXISTS (SELECT 1 FROM run r WHERE r.subject = s.id)
    FOR UPDATE SKIP LOCKED)
  RETURNING 1
)
SELECT count(*) FROM gone

-- name: record
-- The record of one pruned batch.
INSERT INTO prune (pruned_at, workflow, retention_days, oldest_ended_at, newest_ended_at,
                   runs, slots, timeline, notifications, links, timers, subjects)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
RETURNING id

-- name: due_count
-- How many runs due_runs would find for workflow $1 and cutoff $2, without a limit.
SELECT count(*) FROM run r
WHERE r.ended_at < $2 AND r.ended_at IS NOT NULL AND r.workflow = $1
  AND r.status IN ('completed', 'cancelled')
  AND NOT EXISTS (SELECT 1 FROM slot s WHERE s.run = r.id AND s.opened_at IS NOT NULL
                  AND s.measured_clock IS NULL)
