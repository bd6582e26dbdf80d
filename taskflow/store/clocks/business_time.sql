-- Business time materialised per calendar (store/clocks/business_time.py): the spans of local
-- years built (calendar_span) and the working intervals with their running count
-- (calendar_interval, written by COPY).

-- name: covered
-- Each calendar of names $1 (text[]) with its span when built from digest $2 (text[],
-- one per name; NULLs: absent or built from another definition).
SELECT n.name, s.first_year, s.stop_year
FROM unnest($1::text[], $2::text[]) n(name, d)
LEFT JOIN calendar_span s ON s.calendar = n.name AND s.digest = n.d

-- name: span_create
-- An empty span for calendar $1 at year $2 with digest $3, unless it has one.
INSERT INTO calendar_span (calendar, first_year, stop_year, digest, updated_at)
VALUES ($1, $2, $2, $3, now())
ON CONFLICT (calendar) DO NOTHING

-- name: span_lock
-- Calendar $1's span, locked (a concurrent extension waits, then finds the years).
SELECT first_year, stop_year, digest FROM calendar_span WHERE calendar = $1 FOR UPDATE

-- name: intervals_drop
-- Forget calendar $1's intervals (its definition changed).
DELETE FROM calendar_interval WHERE calendar = $1

-- name: count_at_end
-- Calendar $1's running count at the end of its last interval, in µs.
SELECT cum_us + (extract(epoch FROM (ends_at - starts_at)) * 1000000)::bigint
FROM calendar_interval WHERE calendar = $1 ORDER BY starts_at DESC LIMIT 1

-- name: span_save
-- Calendar $1's span: local years $2 to $3 (excluded), digest $4.
UPDATE calendar_span SET first_year = $2, stop_year = $3, digest = $4, updated_at = now()
WHERE calendar = $1
