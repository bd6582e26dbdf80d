-- Report measures stored on ended slots (store/reports/slot_measures.py). Markers filled at
-- import: /*:holds*/ and /*:is_move*/ the timeline-line tests of measure_sql on alias a,
-- /*:unkept_pickup*/ slot_measures.UNKEPT_PICKUP (a live slot picked up without its time
-- to pickup kept), /*:ended*/ report_sql.ENDED (an ended slot), /*:measured_ended*/ and
-- /*:measured_picked*/ the report's per-slot CTEs (measure_sql.measured_ctes, ending in
-- mc) over the backfill's two sets of slots.

-- name: moves_of
-- The held/released/ended lines of the slots $2 (uuid[]) of the runs $1 (uuid[]), in
-- timeline order, each with whether it starts a hold.
SELECT a.slot, a.kind, a.at, /*:holds*/ AS held FROM audit_event a
WHERE a.run = ANY($1::uuid[]) AND a.slot = ANY($2::uuid[])
AND /*:is_move*/ ORDER BY a.slot, a.at, a.id

-- name: save
-- Store an ended slot's measures (run with executemany, after its clocks were saved):
-- slot $1 (uuid), its report clock's milestone $2 (text), time to pickup $3 business and
-- $4 real, time to done $5 business and $6 real, worked time $7 (bigint µs); the clock's
-- outcome as the report reads it: met, and breached from the first of the recorded breach
-- and (met late, or never met) the due instant.
UPDATE slot SET measured_clock = $2, pickup_biz_us = $3, pickup_real_us = $4,
                done_biz_us = $5, done_real_us = $6, worked_us = $7,
                clock_met = (k.met_at IS NOT NULL),
                breach_from = least(k.breached_at, CASE WHEN k.met_at IS NULL
                                                        OR k.due_at < k.met_at
                                                   THEN k.due_at END)
-- One row even without a clock (then all null: not met, never breached).
FROM (SELECT max(c.met_at) AS met_at, max(c.due_at) AS due_at,
             max(c.breached_at) AS breached_at
      FROM sla_clock c WHERE c.slot = $1 AND c.milestone = $2) k
WHERE slot.id = $1

-- name: first_unmeasured
-- When the earliest slot opened from $1 (timestamptz) that ended without its measures,
-- or was picked up without its time to pickup kept, opened (NULL: none).
SELECT min(opened_at) FROM slot sl
WHERE ((sl.measured_clock IS NULL AND sl.status IN ('satisfied', 'cancelled', 'expired'))
       OR /*:unkept_pickup*/)
  AND sl.opened_at >= $1

-- name: lock_backfill_runs
-- The lock order: the runs of the slots backfill is about to write (opened in [$1, $2),
-- timestamptz), in id order.
SELECT 1 FROM run WHERE id IN (
    SELECT sl.run FROM slot sl WHERE sl.opened_at >= $1 AND sl.opened_at < $2
    AND ((sl.measured_clock IS NULL AND /*:ended*/) OR /*:unkept_pickup*/))
ORDER BY id FOR NO KEY UPDATE

-- name: backfill_ended
-- Store measures on ended, unmeasured slots opened in [$2, $3): the parameters of
-- measure_sql.base_args. The CTEs are fenced (OFFSET 0): inlined into the UPDATE, the
-- day-row joins were planned as nested loops (minutes for 100 k slots, bench/report.py);
-- on their own they hash, as in a report.
/*:measured_ended*/
UPDATE slot SET measured_clock = mc.clock_milestone, pickup_biz_us = mc.pickup_biz,
                pickup_real_us = mc.pickup_real, done_biz_us = mc.done_biz,
                done_real_us = mc.done_real, worked_us = mc.worked_us,
                clock_met = (mc.met_at IS NOT NULL),
                breach_from = least(mc.breached_at, CASE WHEN mc.met_at IS NULL
                                                         OR mc.due_at < mc.met_at
                                                    THEN mc.due_at END)
FROM (SELECT * FROM mc OFFSET 0) mc WHERE slot.id = mc.id

-- name: backfill_picked
-- Store the time to pickup of live slots opened in [$2, $3) picked up without it being
-- kept (the parameters of measure_sql.base_args; fenced as backfill_ended).
/*:measured_picked*/
UPDATE slot SET pickup_clock = mc.clock_milestone, pickup_biz_us = mc.pickup_biz,
                pickup_real_us = mc.pickup_real
FROM (SELECT * FROM mc OFFSET 0) mc WHERE slot.id = mc.id

-- name: tidy
-- Vacuum and analyse the slot table after a backfill (outside any transaction).
VACUUM (ANALYZE) slot
