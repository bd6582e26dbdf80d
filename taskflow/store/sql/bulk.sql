-- Statements of store/bulk.py: what bulkOperate counts and touches.

-- name: dead_timers
-- The dead timers of runs $1 (uuid[]), in lock order (run, then timer id).
SELECT t.run, t.id FROM timer t
WHERE t.run = ANY($1::uuid[]) AND t.status = 'dead'
ORDER BY t.run, t.id
