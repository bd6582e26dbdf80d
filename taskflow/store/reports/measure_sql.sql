-- Statements of store/reports/measure_sql.py: the report's per-slot measures taken on read.
--
-- Parameters (measure_sql.base_args): $1 now, $2 and $3 the window [start, end) of opening
-- instants, $4/$5 the workflows and their calendars (text[]), $6/$7 the calendars and their
-- day lengths in µs, $8 the at-risk share of a budget, $9 now in µs since 1970 (bigint).
--
-- Markers filled once at import from the shared pieces (measure_sql.py, calendar_days.py,
-- risk_sql.py, business_sql.py): /*:calendar_ctes*/ the day rows' CTEs, /*:cal_now*/ each
-- calendar's count at now, /*:worked*/ a slot's held µs less its clock's pauses,
-- /*:has_pauses*/, /*:pickup_biz*/, /*:pickup_real*/, /*:done_biz*/, /*:done_real*/,
-- /*:lead_biz*/, /*:at_risk_now*/ the measures, /*:join_x0*/ .. /*:join_xd*/ the day
-- rows joined. Per call (measure_sql.measured_ctes): /*:clock*/ the slot's clock (c) and
-- /*:where*/ the slots measured.

-- name: measured
WITH wfcal AS (SELECT * FROM unnest($4::text[], $5::text[]) AS w(workflow, calendar)),
/*:calendar_ctes*/,
cal_now AS (/*:cal_now*/),
s AS (
    SELECT sl.id, sl.run, sl.workflow, sl.state, sl.name, sl.priority, sl.audience,
           coalesce(sl.holder, sl.satisfied_by) AS holder,
           sl.status IN ('pending', 'open', 'claimed') AS live,
           sl.opened_at, sl.satisfied_at,
           least(coalesce(sl.satisfied_at, sl.cancelled_at, $1), $1) AS ended_at,
           coalesce(sl.picked_at, sl.claimed_at, sl.satisfied_at) AS picked_at,
           (extract(epoch FROM sl.opened_at) * 1000000)::bigint AS o_us,
           (extract(epoch FROM coalesce(sl.picked_at, sl.claimed_at, sl.satisfied_at)) * 1000000)::bigint AS p_us,
           (extract(epoch FROM sl.satisfied_at) * 1000000)::bigint AS d_us,
           (extract(epoch FROM c.due_at) * 1000000)::bigint AS due_us,
           /*:worked*/ AS worked_us,
           c.calendar AS clock_cal, coalesce(c.calendar, w.calendar) AS cal,
           coalesce(c.milestone, '') AS clock_milestone,
           -- Time to pickup kept on the slot at its pickup, on this very clock.
           coalesce(sl.pickup_clock = coalesce(c.milestone, ''), false) AS pickup_kept,
           sl.pickup_biz_us, sl.pickup_real_us,
           c.budget_us IS NOT NULL AS has_clock, /*:has_pauses*/ AS has_pauses,
           c.pauses, c.met_at, c.due_at,
           c.breached_at, c.budget_us, c.working_days
    FROM slot sl
    LEFT JOIN wfcal w ON w.workflow = sl.workflow
    /*:clock*/
    WHERE /*:where*/
    -- A fence: planned with the day-row joins, the clock probe went inside a nested loop
    -- that rescanned the day rows per slot (bench/report.py).
    OFFSET 0
),
mc AS (
    SELECT s.*,
           CASE WHEN s.pickup_kept THEN s.pickup_biz_us ELSE /*:pickup_biz*/ END AS pickup_biz,
           CASE WHEN s.pickup_kept THEN s.pickup_real_us ELSE /*:pickup_real*/ END AS pickup_real,
           /*:done_biz*/ AS done_biz,
           /*:done_real*/ AS done_real,
           -- Live slots end now: the µs of both instants are at hand.
           CASE WHEN s.ended_at = $1 AND s.o_us <= $9::bigint THEN $9::bigint - s.o_us
                ELSE /*:lead_biz*/ END AS lead_us,
           s.has_clock AND s.met_at IS NOT NULL AND NOT bz.breached AS met,
           bz.breached,
           s.live AND s.has_clock AND s.met_at IS NULL
               AND (s.due_at <= $1 OR s.breached_at <= $1) IS TRUE AS breached_now,
           /*:at_risk_now*/ AS at_risk_now
    FROM s
    -- Day rows only for the instants measured here (no key: no probe).
    /*:join_x0*/
    /*:join_x1*/
    /*:join_x2*/
    LEFT JOIN cal_now nw ON nw.calendar = s.clock_cal
    /*:join_xd*/
    CROSS JOIN LATERAL (SELECT s.has_clock AND (
        (s.breached_at IS NOT NULL AND s.breached_at <= $1)
        OR coalesce(CASE WHEN s.met_at IS NOT NULL THEN s.due_at < s.met_at
                         ELSE s.due_at <= $1 END, false)) AS breached) bz
)
