-- The breach forecast's peers (store/reports/forecast.py): slots with a milestone clock,
-- read as opened, due, ended and breached (core/reports/forecast.py).

-- name: ended
-- Slots of the workflows $1 (text[]; NULL: every workflow) opened in [$2, $3) (timestamptz)
-- that ended with a clock: breached when the breach was recorded or the clock was met late.
SELECT sl.workflow, sl.state, sl.name, sl.opened_at, sl.sla_due_at AS due_at,
       coalesce(sl.satisfied_at, sl.cancelled_at, sl.updated_at) AS ended_at,
       (sl.sla_breached_at IS NOT NULL OR sl.sla_met_at > sl.sla_due_at) AS breached
FROM slot sl
WHERE sl.status IN ('satisfied', 'cancelled', 'expired')
  AND sl.sla_due_at IS NOT NULL AND sl.opened_at IS NOT NULL
  AND sl.opened_at >= $2 AND sl.opened_at < $3
  AND ($1::text[] IS NULL OR sl.workflow = ANY($1::text[]))

-- name: live
-- The open or held slots of the workflows $1 (text[]; NULL: every workflow) whose clock
-- is still counting, with their ids.
SELECT sl.id, sl.workflow, sl.state, sl.name, sl.opened_at, sl.sla_due_at AS due_at
FROM slot sl
WHERE sl.status IN ('open', 'claimed') AND sl.sla_due_at IS NOT NULL
  AND sl.sla_met_at IS NULL AND sl.opened_at IS NOT NULL
  AND ($1::text[] IS NULL OR sl.workflow = ANY($1::text[]))
