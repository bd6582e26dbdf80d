-- The live feed (store/live/live.py, docs/live.md): every statement that writes timeline
-- lines announces their id range at commit; subscribers' processes read the lines back.

-- name: live_function
-- The trigger function announcing the ids of the timeline lines a statement inserted
-- (migration 2026-12-04T08:30): 'low high' on channel taskflow_live, delivered at commit
-- (never for a rolled-back decision). Constant size, whatever the statement wrote.
CREATE FUNCTION live_lines() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  low bigint;
  high bigint;
BEGIN
  SELECT min(id), max(id) INTO low, high FROM live_lines;
  IF low IS NOT NULL THEN
    PERFORM pg_notify('taskflow_live', low || ' ' || high);
  END IF;
  RETURN NULL;
END
$$

-- name: live_trigger
-- Every writer of timeline lines inserts into audit_event (the outbox's trigger sees the same).
CREATE TRIGGER audit_event_live AFTER INSERT ON audit_event
REFERENCING NEW TABLE AS live_lines
FOR EACH STATEMENT EXECUTE FUNCTION live_lines()

-- name: with_snapshot
-- The lines that lines_in or lines_after select (live.py puts one in the brace-named
-- place), in id order, each row (and one row with no line when none is found) carrying
-- the statement's snapshot xmin and xmax (service/live/watermark.py).
SELECT pg_snapshot_xmin(s.snap)::text::bigint AS xmin,
       pg_snapshot_xmax(s.snap)::text::bigint AS xmax,
       l.id, l.run, l.slot, l.kind, l.workflow
FROM (SELECT pg_current_snapshot() AS snap) s
LEFT JOIN LATERAL ({lines}) l ON true
ORDER BY l.id

-- name: lines_in
-- The committed lines whose ids fall in the ranges [$1[i], $2[i]] (bigint[]), with their
-- run's workflow (read through with_snapshot).
SELECT l.id, l.run, l.slot, l.kind, r.workflow
FROM unnest($1::bigint[], $2::bigint[]) AS g(low, high)
JOIN audit_event l ON l.id BETWEEN g.low AND g.high
JOIN run r ON r.id = l.run

-- name: lines_after
-- The lines after id $1 (a cursor), at most $2, in id order (read through with_snapshot).
SELECT l.id, l.run, l.slot, l.kind, r.workflow
FROM audit_event l JOIN run r ON r.id = l.run
WHERE l.id > $1
ORDER BY l.id
LIMIT $2

-- name: last_line
-- The newest line's id (0 when there is none): the cursor of a fresh subscription.
SELECT coalesce(max(id), 0) FROM audit_event
