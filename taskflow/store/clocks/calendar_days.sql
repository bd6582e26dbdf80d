-- A report's calendars cut into UTC days (store/clocks/calendar_days.py). Markers filled by
-- calendar_days.ctes for each statement that uses the days (at its import): /*:cals*/ the
-- calendars (a text[] expression), /*:lo*/ the UTC midnight of the first instant and
-- /*:hi*/ the last instant (timestamptz expressions). A day row carries up to
-- calendar_days.PIECES (3) working pieces: s1, e1 .. s3, e3.

-- name: ctes
-- CTEs ending in cal_day: every calendar x every UTC day of [lo, hi], with the working
-- time before the day (cum0), the day's working time (work), its number of pieces (n) and
-- the pieces as µs offsets from midnight. Every interval touching the first UTC day
-- counts, also those that ended before lo on that day: the day's row adds up its pieces
-- from midnight.
cal_iv AS (
    SELECT i.calendar, i.starts_at, i.ends_at
    FROM unnest(/*:cals*/) AS c(calendar)
    CROSS JOIN LATERAL (
        (SELECT j.calendar, j.starts_at, j.ends_at FROM calendar_interval j
         WHERE j.calendar = c.calendar AND j.starts_at <= /*:lo*/
         ORDER BY j.starts_at DESC LIMIT 1)
        UNION ALL
        (SELECT j.calendar, j.starts_at, j.ends_at FROM calendar_interval j
         WHERE j.calendar = c.calendar AND j.starts_at > /*:lo*/ AND j.starts_at <= /*:hi*/)
    ) i
    WHERE i.ends_at > i.starts_at
),
cal_piece AS (
    SELECT v.calendar, g.day_start,
           row_number() OVER (PARTITION BY v.calendar, g.day_start ORDER BY v.starts_at) AS k,
           (extract(epoch FROM (greatest(v.starts_at, g.day_start)) - (g.day_start))
            * 1000000)::bigint AS s,
           (extract(epoch FROM (least(v.ends_at, g.day_start + interval '24 hours'))
                               - (g.day_start)) * 1000000)::bigint AS e
    FROM cal_iv v
    CROSS JOIN LATERAL generate_series(
        (date_trunc('day', (greatest(v.starts_at, /*:lo*/)) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
        least(v.ends_at, /*:hi*/), interval '24 hours') AS g(day_start)
    WHERE least(v.ends_at, g.day_start + interval '24 hours') > greatest(v.starts_at, g.day_start)
),
cal_work AS (
    SELECT d.calendar, d.day_start, count(p.k) AS n, coalesce(sum(p.e - p.s), 0) AS work,
           min(p.s) FILTER (WHERE p.k = 1) AS s1, min(p.e) FILTER (WHERE p.k = 1) AS e1,
           min(p.s) FILTER (WHERE p.k = 2) AS s2, min(p.e) FILTER (WHERE p.k = 2) AS e2,
           min(p.s) FILTER (WHERE p.k = 3) AS s3, min(p.e) FILTER (WHERE p.k = 3) AS e3
    FROM (SELECT c.calendar, g.day_start FROM unnest(/*:cals*/) AS c(calendar),
                 generate_series(/*:lo*/, /*:hi*/, interval '24 hours') AS g(day_start)) d
    LEFT JOIN cal_piece p ON p.calendar = d.calendar AND p.day_start = d.day_start
    GROUP BY d.calendar, d.day_start
),
cal_day AS (
    -- One lookup per calendar (OFFSET 0: not once per day after a pull-up); later days
    -- add up the working time of the days before.
    SELECT w.*, (extract(epoch FROM w.day_start) * 1000000)::bigint / 86400000000 AS day_no,
           (f.cum + coalesce(sum(w.work) OVER (PARTITION BY w.calendar ORDER BY w.day_start
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))::bigint AS cum0
    FROM cal_work w
    JOIN (SELECT c.calendar,
                 (SELECT i.cum_us + (extract(epoch FROM (least(/*:lo*/, i.ends_at))
                                                         - (i.starts_at)) * 1000000)::bigint
                  FROM calendar_interval i WHERE i.calendar = c.calendar
                    AND i.starts_at <= /*:lo*/
                  ORDER BY i.starts_at DESC LIMIT 1) AS cum
          FROM unnest(/*:cals*/) AS c(calendar) OFFSET 0) f ON f.calendar = w.calendar
)
