-- The forecast watch (store/reports/forecast_watch.py, docs/forecast.md "The at-risk event").

-- name: live
-- The open or held slots whose clock still counts (as forecast.sql's live), with their run,
-- its definition version and the milestone the clock measures (whose forecast_alert applies),
-- and their flag as the last pass left it (NULLs: never forecast).
SELECT sl.id, sl.run, sl.workflow, sl.state, sl.name, sl.opened_at, sl.sla_due_at AS due_at,
       sl.sla_milestone AS milestone, r.definition_version AS version,
       f.flagged, f.evaluated_at
FROM slot sl JOIN run r ON r.id = sl.run LEFT JOIN slot_forecast f ON f.slot = sl.id
WHERE sl.status IN ('open', 'claimed') AND sl.sla_due_at IS NOT NULL
  AND sl.sla_met_at IS NULL AND sl.opened_at IS NOT NULL

-- name: ensure
-- A row for each of the slots $1 (uuid[]) that has none yet (down, never evaluated), so the
-- next statement can lock every one of them; in id order, as the lock takes them, so two
-- workers' passes over the same slots wait for each other instead of deadlocking.
INSERT INTO slot_forecast (slot, flagged, probability, evaluated_at)
SELECT s, false, NULL, '-infinity' FROM unnest($1::uuid[]) AS s
ORDER BY s
ON CONFLICT (slot) DO NOTHING

-- name: lock
-- The flags of the slots $1 (uuid[]) still live with a counting clock, locked until the
-- transaction ends: a second worker's pass waits here and then reads the flag this one set.
SELECT f.slot, f.flagged
FROM slot_forecast f JOIN slot sl ON sl.id = f.slot
WHERE f.slot = ANY($1::uuid[]) AND sl.status IN ('open', 'claimed') AND sl.sla_met_at IS NULL
ORDER BY f.slot
FOR UPDATE OF f

-- name: record
-- The flags $2 (boolean[]) and forecasts $3 (float8[], NULL: not enough history) of the
-- slots $1 (uuid[]), read at $4.
UPDATE slot_forecast f SET flagged = g.flagged, probability = g.probability, evaluated_at = $4
FROM unnest($1::uuid[], $2::boolean[], $3::float8[]) AS g(slot, flagged, probability)
WHERE f.slot = g.slot
