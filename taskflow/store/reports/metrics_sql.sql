-- The statements behind /metrics (store/reports/metrics_sql.py), each bounded by an index.
-- Markers filled at import from the store's shared SQL pieces: /*:calendar_ctes*/ the day
-- rows of calendars $2 from $1 to 35 days later (calendar_days.ctes), /*:cal_now*/ each
-- calendar's count at $1 (risk_sql.cal_now), /*:running*/ and /*:within_share*/ a clock
-- at risk (risk_sql), /*:left*/ its business µs left, /*:due_us*/ its due instant in µs.

-- name: live_slots
-- (workflow, state, status, count) of every live slot.
SELECT workflow, state, status, count(*) AS n FROM slot
WHERE status IN ('pending', 'open', 'claimed')
GROUP BY workflow, state, status

-- name: clocks
-- (workflow, milestone, at risk, breached) over the clocks of live slots: now $1, the
-- calendars $2 (text[]) and their working-day µs $3 (bigint[]), the share of the budget
-- left that is at risk $4 (float8), now in µs $5 (bigint).
WITH
/*:calendar_ctes*/,
cal_now AS (/*:cal_now*/)
SELECT sl.workflow, k.milestone,
    count(*) FILTER (WHERE /*:running*/ AND /*:within_share*/) AS at_risk,
    count(*) FILTER (
        WHERE k.met_at IS NULL AND (k.due_at <= $1 OR k.breached_at <= $1) IS TRUE
    ) AS breached
FROM slot sl
JOIN sla_clock k ON k.slot = sl.id
LEFT JOIN cal_now nw ON nw.calendar = k.calendar
LEFT JOIN cal_day xd ON xd.calendar = k.calendar AND xd.day_no = /*:due_us*/ / /*:day_us*/
CROSS JOIN LATERAL (SELECT /*:left*/ AS left_us) x
WHERE sl.status IN ('pending', 'open', 'claimed')
GROUP BY sl.workflow, k.milestone

-- name: oldest_open
-- When the open slot that opened first opened.
SELECT opened_at FROM slot WHERE status = 'open' AND opened_at IS NOT NULL
ORDER BY opened_at LIMIT 1

-- name: timers
-- Armed timers due by $1, those due before $2, and dead timers.
SELECT
    (SELECT count(*) FROM timer WHERE status = 'armed' AND due_at <= $1) AS due,
    (SELECT count(*) FROM timer WHERE status = 'armed' AND due_at < $2) AS overdue,
    (SELECT count(*) FROM timer WHERE status = 'dead') AS dead

-- name: read_snapshot
-- Snapshot $1: when it was taken and its body.
SELECT taken_at, body FROM metric_snapshot WHERE name = $1

-- name: write_snapshot
-- Replace snapshot $1: taken at $2, body $3 (jsonb).
INSERT INTO metric_snapshot (name, taken_at, body) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET taken_at = EXCLUDED.taken_at, body = EXCLUDED.body
