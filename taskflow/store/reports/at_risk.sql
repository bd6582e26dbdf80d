-- The manager's at-risk list (store/reports/at_risk.py). Markers filled at import as in
-- metrics_sql.sql (/*:calendar_ctes*/, /*:cal_now*/, /*:running*/, /*:within_share*/,
-- /*:left*/, /*:due_us*/, /*:day_us*/) and /*:row_columns*/ (queries.ROW_COLUMNS);
-- /*:where*/ takes the list's filters (the builder), /*:limit*/ the page size.

-- name: at_risk
-- A page of live slots with an at-risk clock, least business µs left first, and how many
-- there are in all: now $1, calendars $2 (text[]) and their working-day µs $3 (bigint[]),
-- the at-risk share of the budget $4 (float8), now in µs $5 (bigint), after the cursor
-- ($6 µs left, bigint, and $7 slot id, uuid; both NULL: from the first).
WITH
/*:calendar_ctes*/,
cal_now AS (/*:cal_now*/),
risky AS (
    SELECT sl.id, min(x.left_us) AS left_us
    FROM slot sl
    JOIN sla_clock k ON k.slot = sl.id
    LEFT JOIN cal_now nw ON nw.calendar = k.calendar
    LEFT JOIN cal_day xd ON xd.calendar = k.calendar AND xd.day_no = /*:due_us*/ / /*:day_us*/
    CROSS JOIN LATERAL (SELECT /*:left*/ AS left_us) x
    WHERE sl.status IN ('pending', 'open', 'claimed') /*:where*/
      AND /*:running*/ AND /*:within_share*/
    GROUP BY sl.id
)
SELECT t.total, p.*
FROM (SELECT count(*) AS total FROM risky) t
LEFT JOIN LATERAL (
    SELECT /*:row_columns*/, rk.left_us
    FROM (SELECT * FROM risky rk
          WHERE $6::bigint IS NULL OR (rk.left_us, rk.id) > ($6, $7::uuid)
          ORDER BY rk.left_us, rk.id LIMIT /*:limit*/) rk
    JOIN slot sl ON sl.id = rk.id
    JOIN run r ON r.id = sl.run JOIN subject sub ON sub.id = r.subject
) p ON true
ORDER BY p.left_us, p.id
