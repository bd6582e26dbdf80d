-- Runs and slots, the plain reads and writes (store/runs/runs.py). /*:run_columns*/ is the
-- run's and its subject's columns (r, s) and /*:slot_columns*/ the slot's, filled at
-- import from runs.RUN_COLUMNS and runs.SLOT_COLUMNS.

-- name: get_run
-- The run $1 (uuid) with its subject.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject WHERE r.id = $1

-- name: get_run_locked
-- get_run, the run's row locked for a decision (the first lock of the lock order).
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject WHERE r.id = $1
FOR NO KEY UPDATE OF r

-- name: get_runs_locked
-- The runs $1 (uuid[]) with their subjects, their rows locked in id order (the lock order:
-- a worker deciding for several runs at once).
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject WHERE r.id = ANY($1)
ORDER BY r.id
FOR NO KEY UPDATE OF r

-- name: get_runs
-- The runs $1 (uuid[]) with their subjects.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.id = ANY($1::uuid[])

-- name: live_run_for
-- A subject's live run of a workflow, started or scheduled: workflow $1 (text), subject $2
-- (uuid) (index run_live_per_subject).
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.workflow = $1 AND r.subject = $2 AND r.status IN ('active', 'scheduled')

-- name: live_run_for_locked
-- live_run_for, the run's row locked.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.workflow = $1 AND r.subject = $2 AND r.status = 'active'
FOR NO KEY UPDATE OF r

-- name: latest_run_for
-- A subject's latest run of a workflow, live or ended: workflow $1 (text), subject $2 (uuid)
-- (index run_subject); an automatic start makes one run per subject.
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.workflow = $1 AND r.subject = $2
ORDER BY r.started_at DESC LIMIT 1

-- name: run_by_idempotency_key
-- The run a start with idempotency key $3 (text) made, live or ended: workflow $1 (text),
-- subject $2 (uuid) (index run_subject).
SELECT /*:run_columns*/ FROM run r JOIN subject s ON s.id = r.subject
WHERE r.workflow = $1 AND r.subject = $2 AND r.idempotency_key = $3
ORDER BY r.started_at DESC LIMIT 1

-- name: live_runs_of_subject
-- The live runs of subject $1 (uuid), locked in id order (index run_subject).
SELECT id, started_at FROM run WHERE subject = $1 AND status = 'active'
ORDER BY id FOR NO KEY UPDATE

-- name: unended_runs_of_subject
-- The runs of subject $1 (uuid) not ended yet, live or scheduled (a delayed start), locked in
-- id order (index run_subject): what deleteSubject ends.
SELECT id, started_at FROM run WHERE subject = $1 AND status IN ('active', 'scheduled')
ORDER BY id FOR NO KEY UPDATE

-- name: runs_by_correlation
-- The live runs correlation key $1 (text) names, of any workflow (run_correlation_key).
SELECT id FROM run WHERE correlation_key = $1 AND status = 'active' ORDER BY started_at, id

-- name: insert_runs
-- New runs, one per element of the arrays (in order): ids $1 (uuid[]), workflows $2,
-- definition versions $3 and digests $4, subjects $5 (uuid[]), states $6, statuses $7, visits
-- $8, correlation keys $9, idempotency keys $10, started by $11; now $12 (started and
-- updated); states entered $13, ended $14, unmatched $15 (timestamptz[]); versions $16;
-- results of automatic steps $17 (JSON text).
INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                 status, visit, correlation_key, idempotency_key, started_by, started_at,
                 state_entered_at, updated_at, ended_at, version, unmatched_at, step_results)
SELECT u.id, u.workflow, u.definition_version, u.digest, u.subject, u.state, u.status,
       u.visit, u.correlation_key, u.idempotency_key, u.started_by, $12, u.state_entered_at,
       $12, u.ended_at, u.version, u.unmatched_at, u.results::jsonb
FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::uuid[], $6::text[], $7::text[],
            $8::int[], $9::text[], $10::text[], $11::text[], $13::timestamptz[],
            $14::timestamptz[], $15::timestamptz[], $16::int[], $17::text[])
     WITH ORDINALITY AS u(id, workflow, definition_version, digest, subject, state, status,
                          visit, correlation_key, idempotency_key, started_by,
                          state_entered_at, ended_at, unmatched_at, version, results, n)
ORDER BY u.n

-- name: live_runs_for_many
-- The live runs (started or scheduled) of the (workflow, subject) pairs $1 (text[]) and $2
-- (uuid[]), as live_run_for reads one (index run_live_per_subject).
SELECT r.id, r.workflow, r.subject, r.state FROM run r
JOIN unnest($1::text[], $2::uuid[]) AS u(workflow, subject)
  ON r.workflow = u.workflow AND r.subject = u.subject
WHERE r.status IN ('active', 'scheduled')

-- name: slots_of_run
-- Every slot of run $1 (uuid), in visit, name, item order.
SELECT /*:slot_columns*/ FROM slot WHERE run = $1 ORDER BY visit, name, item_index, id

-- name: slots_of_runs
-- Every slot of the runs $1 (uuid[]), by run, in visit, name, item order.
SELECT /*:slot_columns*/ FROM slot WHERE run = ANY($1::uuid[])
ORDER BY run, visit, name, item_index, id

-- name: get_slot
-- The slot $1 (uuid).
SELECT /*:slot_columns*/ FROM slot WHERE id = $1

-- name: get_slot_locked
-- get_slot, its row locked (after its run's, in the lock order).
SELECT /*:slot_columns*/ FROM slot WHERE id = $1 FOR UPDATE

-- name: insert_slot
-- A new slot (run with executemany): $1..$9 its fixed columns, then $10..$30 what a decision
-- may change, as update_slot takes them (runs._changed_columns), now $27 (created and updated).
INSERT INTO slot (id, run, visit, state, name, waits_for, item_index, item, workflow,
                  status, holder, audience, deny, residual, delegates, delegates_deny,
                  delegates_residual, priority, payload, label, version, opened_at,
                  claimed_at, satisfied_at, satisfied_by, cancelled_at, updated_at,
                  picked_at, held_us, held_since, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, $17,
        $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $27)

-- name: update_slot
-- A slot a decision changed (run with executemany; the run's row lock serialises
-- decisions): slot $1 (uuid), then its new status, holder, audience columns, priority,
-- payload, label, version, instants, now $19 and held time, in the order written.
UPDATE slot SET status = $2, holder = $3, audience = $4, deny = $5, residual = $6,
                delegates = $7, delegates_deny = $8, delegates_residual = $9,
                priority = $10, payload = $11, label = $12, version = $13,
                opened_at = $14, claimed_at = $15, satisfied_at = $16,
                satisfied_by = $17, cancelled_at = $18, updated_at = $19,
                picked_at = $20, held_us = $21, held_since = $22
WHERE id = $1
