-- Holiday feeds' last outcome (store/clocks/calendar_feeds.py).

-- name: succeeded
-- Feed file $1 (from URL $2, read by calendars $3) answered at $4: it fails no more.
INSERT INTO calendar_feed (file, url, calendars, checked_at, failing_since, last_error)
VALUES ($1, $2, $3::text[], $4, NULL, NULL)
ON CONFLICT (file) DO UPDATE
SET url = excluded.url, calendars = excluded.calendars, checked_at = excluded.checked_at,
    failing_since = NULL, last_error = NULL

-- name: failed
-- Feed file $1 (URL $2, calendars $3) failed at $4 with $5; failing since its first failure
-- in a row.
INSERT INTO calendar_feed (file, url, calendars, checked_at, failing_since, last_error)
VALUES ($1, $2, $3::text[], $4, $4, $5)
ON CONFLICT (file) DO UPDATE
SET url = excluded.url, calendars = excluded.calendars, checked_at = excluded.checked_at,
    failing_since = COALESCE(calendar_feed.failing_since, excluded.checked_at),
    last_error = excluded.last_error

-- name: failing
-- The feeds failing now, longest first.
SELECT file, url, calendars, checked_at, failing_since, last_error FROM calendar_feed
WHERE failing_since IS NOT NULL ORDER BY failing_since, file
