-- A run's lead time (store/reports/lead_time.py). Markers filled at import from the report's
-- per-slot pieces (store/reports/measure_sql.py): /*:clock*/ a slot's clock (lateral),
-- /*:held*/ its held ranges up to $2 (lateral), /*:paused*/ its clock's paused ranges,
-- /*:worked*/ the measure of a union of worked ranges in µs.

-- name: of_run
-- Run $1's (uuid) lead time at $2: in all, worked, and per state (first entered first).
WITH r AS (
    SELECT id, started_at, greatest(started_at, least(coalesce(ended_at, $2), $2)) AS ended
    FROM run WHERE id = $1
),
visits AS (
    SELECT a.details->>'state' AS state, a.at AS entered, a.id,
           least(coalesce(lead(a.at) OVER (ORDER BY a.at, a.id), r.ended), r.ended) AS left_at
    FROM audit_event a JOIN r ON a.run = r.id
    WHERE a.kind = 'state.entered'
),
w AS (
    SELECT sl.state, ev.held - coalesce(/*:paused*/, '{}') AS worked
    FROM slot sl /*:clock*/ /*:held*/
    WHERE sl.run = $1 AND ev.held IS NOT NULL
),
per_state AS (
    SELECT v.state, min(v.id) AS first_entry,
           sum((extract(epoch FROM v.left_at - v.entered) * 1000000)::bigint) AS total_us,
           (SELECT /*:worked*/ FROM w WHERE w.state = v.state) AS worked_us
    FROM visits v GROUP BY v.state
)
SELECT (extract(epoch FROM r.ended - r.started_at) * 1000000)::bigint AS total_us,
       (SELECT /*:worked*/ FROM w) AS worked_us,
       coalesce((SELECT json_agg(json_build_array(p.state, p.total_us, p.worked_us)
                                 ORDER BY p.first_entry) FROM per_state p), '[]') AS states
FROM r

-- name: on_children
-- Run $1's time waiting on its awaited children at $2: the union of the ranges from each
-- awaited child's row (its state entered) to the child's end (or the row's settling when
-- no child ran, or $2 while it runs), in total and per state (compensations are not
-- waited for: they are left out).
WITH ranges AS (
    SELECT rc.state,
           tstzrange(rc.created_at,
                     greatest(rc.created_at, least($2, coalesce(
                         cr.ended_at,
                         CASE WHEN rc.status IN ('settled', 'detached') THEN rc.updated_at END,
                         $2)))) AS waited
    FROM run_child rc LEFT JOIN run cr ON cr.id = rc.child
    WHERE rc.parent = $1 AND rc.awaited AND NOT rc.subject ? 'compensates'
),
per_state AS (
    SELECT state, range_agg(waited) AS waited FROM ranges GROUP BY state
)
SELECT coalesce((SELECT sum(extract(epoch FROM upper(u) - lower(u)) * 1000000)::bigint
                 FROM unnest((SELECT range_agg(waited) FROM ranges)) u), 0) AS total_us,
       coalesce((SELECT json_object_agg(p.state, (SELECT coalesce(sum(extract(epoch FROM
                     upper(u) - lower(u)) * 1000000)::bigint, 0) FROM unnest(p.waited) u))
                 FROM per_state p), '{}') AS states
