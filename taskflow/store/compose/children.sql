-- Child runs (store/compose/children.py, docs/composition.md): the run_child rows, what the
-- worker takes, and the trigger that notes a child's end in the child's own statement.

-- name: enqueue_many
-- Children to start, a batch at once: keys $1, parents $2, visits $3, states $4, labels $5,
-- workflows $6, awaited $7, subjects $8 (JSON text), at $9. A key that exists adds nothing.
INSERT INTO run_child (key, parent, visit, state, label, workflow, awaited, status, subject,
                       created_at, updated_at)
SELECT u.key, u.parent, u.visit, u.state, u.label, u.workflow, u.awaited, 'starting',
       u.subject::jsonb, $9, $9
FROM unnest($1::text[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[],
            $7::boolean[], $8::text[]) AS u(key, parent, visit, state, label, workflow,
                                              awaited, subject)
ON CONFLICT (key) DO NOTHING

-- name: cancel_left
-- Runs $1 are now at visit $2 with status $3 (at $4): the awaited children of a visit they
-- left are to be cancelled by the worker (bare children run on unless the run was
-- cancelled: the trigger sees to that); children of a left visit not started never start.
-- Sagas: a visit left unfinished (a sibling not ended well, or the run cancelled in it)
-- gets one compensation row per step that completed, newest end first (ids in that order:
-- the worker starts them so); keyed '<step key>:undo', so it is planned at most once.
-- Compensation rows (subject ? 'compensates') are never cancelled nor dropped here.
WITH live AS (
    UPDATE run_child rc SET status = 'cancelling', updated_at = $4
    FROM unnest($1::uuid[], $2::int[], $3::text[]) AS u(run, visit, status)
    WHERE rc.parent = u.run AND rc.status = 'live' AND rc.awaited
      AND NOT rc.subject ? 'compensates'
      AND (rc.visit <> u.visit OR u.status <> 'active')
    RETURNING rc.id
), unstarted AS (
    UPDATE run_child rc SET status = 'settled', updated_at = $4,
           outcome = jsonb_build_object('state', NULL, 'failure', NULL,
                                        'reason', 'the parent left the state first')
    FROM unnest($1::uuid[], $2::int[], $3::text[]) AS u(run, visit, status)
    WHERE rc.parent = u.run AND rc.status = 'starting' AND NOT rc.subject ? 'compensates'
      AND (rc.visit <> u.visit OR u.status <> 'active')
    RETURNING rc.id
), undo AS (
    /*:undo_row*/
           $4, $4
    FROM run_child rc
    JOIN unnest($1::uuid[], $2::int[], $3::text[]) AS u(run, visit, status) ON rc.parent = u.run
    JOIN run cr ON cr.id = rc.child
    WHERE rc.subject ? 'compensation' AND rc.status IN ('ended', 'settled')
      AND cr.status = 'completed' AND coalesce(rc.outcome->>'failure', '') = ''
      AND (rc.visit <> u.visit OR u.status <> 'active')
      -- A race's winner (await_first): the completed step its parent read while it raced
      -- (reading one moved it on); the runners-up that completed too, still 'ended' then,
      -- are undone.
      AND NOT (rc.subject ? 'race' AND rc.status = 'settled')
      AND ((u.status = 'cancelled' AND rc.visit = u.visit) OR rc.subject ? 'race' OR EXISTS (
            SELECT 1 FROM run_child sib LEFT JOIN run sr ON sr.id = sib.child
            WHERE sib.parent = rc.parent AND sib.visit = rc.visit AND sib.awaited
              AND NOT sib.subject ? 'compensates'
              AND (sib.status NOT IN ('ended', 'settled') OR sr.status IS DISTINCT FROM
                   'completed' OR coalesce(sib.outcome->>'failure', '') <> '')))
    ORDER BY cr.ended_at DESC, rc.id DESC
    ON CONFLICT (key) DO NOTHING
    RETURNING id
)
-- The workers are woken when a child is to be cancelled or a compensation started (at
-- commit).
SELECT pg_notify('taskflow_timers', '')
FROM (SELECT (SELECT count(*) FROM live) + (SELECT count(*) FROM unstarted)
             + (SELECT count(*) FROM undo) AS n) c
WHERE c.n > 0

-- name: undo_late
-- Row $1 is a saga step whose run completed after its parent left the step's visit (a
-- race's runner-up whose cancel lost to its end; a step of a scope left unfinished that
-- ended before its cancel): its one compensation row at $2, as cancel_left plans one,
-- keyed '<step key>:undo' (so at most once). Answers the row added (none: it was already);
-- the workers are woken at commit.
WITH added AS (
    /*:undo_row*/
           $2, $2
    FROM run_child rc WHERE rc.id = $1 AND rc.subject ? 'compensation'
    ON CONFLICT (key) DO NOTHING
    RETURNING id
)
SELECT a.id, pg_notify('taskflow_timers', '') FROM added a

-- name: rename
-- Run $1 migrated, staying at visit $2 in state $3: its children of that visit take the
-- labels $5 for $4 (old, new pairs), and the state's new name; their keys follow the label,
-- so the new version's state does not start them again.
UPDATE run_child rc SET state = $3, label = m.label,
       key = rc.parent::text || ':' || rc.visit::text || ':' || m.label
FROM (SELECT r.id, coalesce((SELECT u.new FROM unnest($4::text[], $5::text[]) AS u(old, new)
                             WHERE u.old = r.label), r.label) AS label
      FROM run_child r WHERE r.parent = $1 AND r.visit = $2) m
WHERE rc.id = m.id

-- name: due
-- Up to $1 rows the worker has to act on, with their parents: read without a lock (the
-- worker locks the parent, then the rows). Ends and cancels first (a parent waiting on its
-- last child is resumed before more children start), then starts, oldest first; a
-- compensation's next attempt waits for its backoff (subject.not_before after $2, now).
-- Starts only when $3 (the lane reading ends alone passes false).
-- Each row with its status and its parent's workspace (a worker starts the children of
-- several parents of one workspace together).
SELECT rc.id, rc.parent, rc.status, p.workspace FROM (
  (SELECT rc.id, rc.parent, rc.status FROM run_child rc
   WHERE rc.status IN ('cancelling', 'ended') ORDER BY id LIMIT $1)
  UNION ALL
  (SELECT rc.id, rc.parent, rc.status FROM run_child rc WHERE $3 AND rc.status = 'starting'
     AND coalesce((rc.subject->>'not_before')::timestamptz, '-infinity') <= $2
   ORDER BY id LIMIT $1)
  LIMIT $1
) rc JOIN run p ON p.id = rc.parent
ORDER BY rc.status = 'starting', rc.id

-- name: lock_many
-- The rows $1, locked in id order (their parent's run is locked first: the lock order).
SELECT id, key, parent, child, visit, state, label, workflow, awaited, status, subject,
       outcome, created_at, updated_at
FROM run_child WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE

-- name: lock_due_of
-- Up to $2 rows of the parents $1 (uuid[]) the worker has to act on at $3, as due finds them
-- (ends and cancels first, then starts; a parent's rows together, oldest first; starts only
-- when $4), locked (the parents' runs are locked first).
SELECT id, key, parent, child, visit, state, label, workflow, awaited, status, subject,
       outcome, created_at, updated_at
FROM run_child rc
WHERE rc.parent = ANY($1::uuid[])
  AND (rc.status IN ('cancelling', 'ended')
       OR ($4 AND rc.status = 'starting'
           AND coalesce((rc.subject->>'not_before')::timestamptz, '-infinity') <= $3))
ORDER BY rc.status = 'starting', rc.parent, rc.id
LIMIT $2
FOR UPDATE

-- name: started_many
-- Rows $1 (bigint[]): their child runs $2 (uuid[], in the same order) started at $3.
UPDATE run_child rc SET status = 'live', child = u.child, updated_at = $3
FROM unnest($1::bigint[], $2::uuid[]) AS u(id, child) WHERE rc.id = u.id

-- name: settled_many
-- Rows $1 (bigint[]) done with at $3, each keeping the outcome in $2 (JSON text[], in order).
UPDATE run_child rc SET status = 'settled', outcome = u.outcome::jsonb, updated_at = $3
FROM unnest($1::bigint[], $2::text[]) AS u(id, outcome) WHERE rc.id = u.id

-- name: settled
-- Row $1 done with at $3; $2 the outcome the parent read (JSON text, or null).
UPDATE run_child rc SET status = 'settled', outcome = coalesce($2::text::jsonb, rc.outcome),
       updated_at = $3
WHERE rc.id = $1

-- name: of_parents
-- The children of runs $1, in the order they were made.
SELECT id, key, parent, child, visit, state, label, workflow, awaited, status, subject,
       outcome, created_at, updated_at
FROM run_child WHERE parent = ANY($1::uuid[]) ORDER BY parent, id

-- name: parents_of
-- The parent rows of child runs $1.
SELECT id, key, parent, child, visit, state, label, workflow, awaited, status, subject,
       outcome, created_at, updated_at
FROM run_child WHERE child = ANY($1::uuid[])

-- name: detach
-- Cut child run $1 loose from its parent at $2 (only while it runs): its end resumes no one
-- and its parent's cancel does not reach it. Returns the row as it was.
UPDATE run_child rc SET status = 'detached', updated_at = $2
WHERE rc.child = $1 AND rc.status IN ('live', 'cancelling')
RETURNING id, parent, label

-- name: cancel_reason
-- Why run $1 was cancelled: its last run.cancelled line.
SELECT reason FROM audit_event WHERE run = $1 AND kind = 'run.cancelled'
ORDER BY id DESC LIMIT 1

-- name: in_flight
-- Children started or to start and not settled: the gauge taskflow_children_in_flight.
SELECT count(*) FROM run_child rc
WHERE rc.status IN ('starting', 'live', 'cancelling', 'ended')

-- name: compensations
-- A saga's compensations by outcome (running, done, failed): the gauge
-- taskflow_compensations (index run_child_compensations).
SELECT CASE WHEN rc.status <> 'settled' THEN 'running'
            WHEN coalesce(rc.outcome->>'failure', '') = '' THEN 'done'
            ELSE 'failed' END AS outcome, count(*) AS n
FROM run_child rc WHERE rc.subject ? 'compensates'
GROUP BY 1

-- name: on_end_function
-- The trigger function (migration 2026-12-04T08:10): a run that stops being active, in the
-- statement that ends it. As a child, its row is marked ended for the worker to resume the
-- parent (once, under the parent's lock); as a cancelled parent, its live children are
-- marked cancelling for the worker to cancel, and those not started yet never start.
-- Replaced by 2026-12-04T09:30: a saga's compensations (subject ? 'compensates') are
-- neither cancelled nor dropped with their parent: they undo what it did.
CREATE FUNCTION run_child_on_end() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  touched integer := 0;
  n integer;
BEGIN
  UPDATE run_child rc SET status = 'ended', updated_at = coalesce(NEW.ended_at, now())
   WHERE rc.child = NEW.id AND rc.status IN ('live', 'cancelling');
  GET DIAGNOSTICS n = ROW_COUNT;
  touched := touched + n;
  IF NEW.status = 'cancelled' THEN
    UPDATE run_child rc SET status = 'cancelling', updated_at = coalesce(NEW.ended_at, now())
     WHERE rc.parent = NEW.id AND rc.status = 'live' AND NOT rc.subject ? 'compensates';
    GET DIAGNOSTICS n = ROW_COUNT;
    touched := touched + n;
    UPDATE run_child rc SET status = 'settled', updated_at = coalesce(NEW.ended_at, now()),
           outcome = jsonb_build_object('state', NULL, 'failure', NULL,
                                        'reason', 'the parent run was cancelled first')
     WHERE rc.parent = NEW.id AND rc.status = 'starting' AND NOT rc.subject ? 'compensates';
  END IF;
  IF touched > 0 THEN
    PERFORM pg_notify('taskflow_timers', '');
  END IF;
  RETURN NULL;
END
$$

-- name: on_end_trigger
-- Every writer that ends a run (use cases, the worker's batches) updates its row: the
-- child's end is noted in the same transaction, whoever wrote it.
CREATE TRIGGER run_child_on_end AFTER UPDATE OF status ON run
FOR EACH ROW WHEN (OLD.status = 'active' AND NEW.status <> 'active')
EXECUTE FUNCTION run_child_on_end()

-- name: again
-- A failed compensation (row $1) is started again at $2: a row like it, attempt $3, keyed
-- by attempt, so the worker that settles the failure (or the operator who redoes it) adds
-- it once; not started before $4 (its backoff; null: at once). The workers are woken at
-- commit.
WITH added AS (
INSERT INTO run_child (key, parent, visit, state, label, workflow, awaited, status, subject,
                       created_at, updated_at)
SELECT split_part(rc.key, ':undo', 1) || ':undo:' || $3::int, rc.parent, rc.visit, rc.state,
       rc.label, rc.workflow, false, 'starting',
       rc.subject || jsonb_build_object('attempt', $3::int, 'not_before', $4::timestamptz),
       $2, $2
FROM run_child rc WHERE rc.id = $1
ON CONFLICT (key) DO NOTHING
RETURNING id
)
SELECT pg_notify('taskflow_timers', '') FROM added

-- name: failed_compensation
-- The compensation of step $2 of run $1 that failed its last attempt and no operator has
-- resolved yet (the COMPENSATION_FAILED item), locked; its run is locked first.
SELECT id, key, parent, child, visit, state, label, workflow, awaited, status, subject,
       outcome, created_at, updated_at
FROM run_child rc
WHERE rc.parent = $1 AND rc.label = $2 AND rc.status = 'settled'
  AND rc.subject ? 'compensates' AND coalesce(rc.outcome->>'failure', '') <> ''
  AND NOT rc.outcome ? 'resolved'
  AND coalesce((rc.subject->>'attempt')::int, 1)
      >= coalesce((rc.subject->>'compensation_attempts')::int, 1)
ORDER BY rc.id DESC LIMIT 1
FOR UPDATE

-- name: resolve
-- An operator ($3) resolved the failed compensation row $1 at $4: $2 'redo' or 'clear'. The
-- row stays, as the record; its attention item goes.
UPDATE run_child rc SET updated_at = $4,
       outcome = rc.outcome || jsonb_build_object('resolved', $2::text, 'resolved_by', $3::text)
WHERE rc.id = $1
