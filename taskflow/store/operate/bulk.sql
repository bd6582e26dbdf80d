-- Statements of store/operate/bulk.py: what bulkOperate counts and takes. /*:where*/ is the runs
-- list's filter and the caller's reach on run r (store/runs/run_list.py). $1 the workflows the
-- caller operates (text[], NULL: all); $2 what the verb needs of a run: 'active' (a live
-- run), 'running_clock' / 'paused_clock' (a live slot's unmet clock running / paused),
-- 'dead_timer' (a dead timer); $3, $4 the (started, id) of a run to count or take after
-- (NULLs: from the start). A run's slots by slot_run_visit, their clocks by
-- sla_clock_slot_milestone, its timers by timer_run.

-- fragment: applies
-- Whether the verb ($2) applies to run r.
CASE $2::text
  WHEN 'active' THEN r.status = 'active'
  WHEN 'dead_timer' THEN EXISTS (
    SELECT 1 FROM timer t WHERE t.run = r.id AND t.status = 'dead')
  ELSE r.status = 'active' AND EXISTS (
    SELECT 1 FROM slot s JOIN sla_clock k ON k.slot = s.id
    WHERE s.run = r.id AND k.met_at IS NULL
      AND s.status IN ('pending', 'open', 'claimed')
      AND (k.pauses->-1 IS NULL OR k.pauses->-1->>1 IS NOT NULL)
          = ($2::text = 'running_clock'))
END

-- name: counts
-- Runs the filter matches, of those in workflows $1, of those the verb applies to, and of
-- those, the ones after run ($3, $4).
WITH m AS (
  SELECT r.id, r.started_at,
         ($1::text[] IS NULL OR r.workflow = ANY($1::text[])) AS operable,
         /*fragment:applies*/ AS applies
  FROM run r WHERE true /*:where*/
)
SELECT count(*) AS matched,
       count(*) FILTER (WHERE m.operable) AS operable,
       count(*) FILTER (WHERE m.operable AND m.applies) AS applicable,
       count(*) FILTER (WHERE m.operable AND m.applies
                        AND ($3::timestamptz IS NULL
                             OR (m.started_at, m.id) > ($3::timestamptz, $4::uuid))) AS beyond
FROM m

-- name: take
-- Up to $5 runs the verb applies to in workflows $1, after run ($3, $4), oldest first.
SELECT r.id, r.started_at FROM (
  SELECT r.id, r.started_at, r.workflow, r.status FROM run r WHERE true /*:where*/
) r
WHERE ($1::text[] IS NULL OR r.workflow = ANY($1::text[]))
  AND ($3::timestamptz IS NULL OR (r.started_at, r.id) > ($3::timestamptz, $4::uuid))
  AND /*fragment:applies*/
ORDER BY r.started_at, r.id
LIMIT $5

-- name: dead_timers
-- The dead timers of runs $1 (uuid[]), in lock order (run, then timer id).
SELECT t.run, t.id FROM timer t
WHERE t.run = ANY($1::uuid[]) AND t.status = 'dead'
ORDER BY t.run, t.id
