-- Statements of store/reports/report_sql.py: the SLA report as one statement (docs/reports.md).
--
-- Parameters of every statement: $1..$9 those of measure_sql.base_args ($1 now, $2 and $3
-- the window [start, end) of opening instants, $4/$5 the workflows and their calendars,
-- $6/$7 the calendars and their day lengths in µs, $8 the at-risk share of a budget,
-- $9 now in µs since 1970); then the milestone asked (when one is), the filters' values
-- (the builder's fragments) and, by period, the periods' first instants (timestamptz[]).
--
-- Markers, filled per request by report_sql.statement through sql_builder.compose from
-- fixed lists only (report_sql.KEYS, the groupings; never a value):
--   /*:measured*/     the CTEs ending in m, one narrow row per slot (measure_sql, union);
--   /*:keys*/         the group keys over m, each "expression AS k_<grouping>";
--   /*:positions*/    their positions for GROUP BY ("1, 2");
--   /*:key_order*/    the keys, each NULLS LAST;
--   /*:key_names*/    the keys' names (k_<grouping>, ...), by period;
--   /*:grid_keys*/    the grid's keys (g.k_<grouping>, ...);
--   /*:grid_order*/   the grid's keys, each NULLS LAST;
--   /*:bounds*/       the periods' first instants' placeholder ($n::timestamptz[]).
-- /*:aggregates*/ is the piece below, filled at import.

-- fragment: grid_figures
-- A period's figures from its aggregates a (LEFT JOINed: an empty period counts zeros).
coalesce(a.opened, 0) AS opened, coalesce(a.met, 0) AS met,
       coalesce(a.breached, 0) AS breached, coalesce(a.still_open, 0) AS still_open,
       coalesce(a.at_risk_now, 0) AS at_risk_now, coalesce(a.breached_now, 0) AS breached_now,
       a.pickup_biz, a.pickup_real, a.done_biz, a.done_real,
       coalesce(a.lead_us, 0) AS lead_us, coalesce(a.worked_us, 0) AS worked_us

-- name: aggregates
-- A piece (no statement of its own): the figures of a group of measured rows m.
count(*) AS opened,
count(*) FILTER (WHERE m.met) AS met,
count(*) FILTER (WHERE m.breached) AS breached,
count(*) FILTER (WHERE m.live) AS still_open,
count(*) FILTER (WHERE m.at_risk_now) AS at_risk_now,
count(*) FILTER (WHERE m.breached_now) AS breached_now,
percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (ORDER BY m.pickup_biz) AS pickup_biz,
percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (ORDER BY m.pickup_real) AS pickup_real,
percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (ORDER BY m.done_biz) AS done_biz,
percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (ORDER BY m.done_real) AS done_real,
coalesce(sum(m.lead_us), 0)::bigint AS lead_us,
coalesce(sum(m.worked_us), 0)::bigint AS worked_us

-- name: totals
-- No grouping: one row of figures.
/*:measured*/,
agg AS (
    SELECT /*:aggregates*/
    FROM m
)
SELECT * FROM agg ORDER BY 1

-- name: grouped
-- Grouped by the keys asked, in key order.
/*:measured*/,
agg AS (
    SELECT /*:keys*/, /*:aggregates*/
    FROM m
    GROUP BY /*:positions*/
)
SELECT * FROM agg ORDER BY /*:key_order*/

-- name: periods
-- By period only: every period, empty ones as zeros. A slot's period is its
-- number among the periods' first instants (width_bucket: a binary search, several times
-- cheaper per slot than date_trunc of the local time, bench/README.md).
/*:measured*/,
agg AS (
    SELECT width_bucket(m.opened_at, /*:bounds*/) AS k_period, /*:aggregates*/
    FROM m
    GROUP BY 1
),
periods AS (SELECT generate_series(1, cardinality(/*:bounds*/)) AS k_period),
ag AS (SELECT * FROM agg),
g AS (SELECT 1 AS one)
SELECT (/*:bounds*/)[p.k_period] AS k_period,
       /*fragment:grid_figures*/
FROM periods p CROSS JOIN g
LEFT JOIN ag a ON a.k_period = p.k_period
ORDER BY p.k_period

-- name: grouped_periods
-- By period and the keys asked: every period for every group seen, empty ones as zeros. Groups
-- are numbered (null keys alike) so the grid joins the aggregates on a number, by hash:
-- joined on the keys themselves (IS NOT DISTINCT FROM, which no hash join takes), every
-- grid row was compared with every group's rows, 18 s for 6 000 holders over five weeks
-- (bench/README.md).
/*:measured*/,
agg AS (
    SELECT width_bucket(m.opened_at, /*:bounds*/) AS k_period, /*:keys*/, /*:aggregates*/
    FROM m
    GROUP BY 1, /*:positions*/
),
periods AS (SELECT generate_series(1, cardinality(/*:bounds*/)) AS k_period),
ag AS (SELECT agg.*, dense_rank() OVER (ORDER BY /*:key_names*/) AS gid FROM agg),
g AS (SELECT DISTINCT gid, /*:key_names*/ FROM ag)
SELECT (/*:bounds*/)[p.k_period] AS k_period, /*:grid_keys*/,
       /*fragment:grid_figures*/
FROM periods p CROSS JOIN g
LEFT JOIN ag a ON a.k_period = p.k_period AND a.gid = g.gid
ORDER BY p.k_period, /*:grid_order*/
