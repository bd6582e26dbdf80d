-- The event outbox and webhook deliveries (store/delivery/webhooks.py, docs/events.md, docs/delivery.md).

-- name: outbox_function
-- The trigger function deriving outbox events (and one delivery per subscribed endpoint)
-- from the timeline lines a statement inserted; created by migration 2026-12-01T21:36,
-- replaced by 2026-12-01T22:41 (clock.at_risk), 2026-12-02T06:00 (no outsider's address),
-- 2026-12-04T08:10 (child runs: run.child_started, run.child_ended), 2026-12-04T09:00
-- (run.deadline_at_risk, run.deadline_breached), 2026-12-04T09:12 (slot.expired,
-- subject.deleted), 2026-12-04T09:20 (all of them together) and
-- 2026-12-04T09:30 (sagas: run.compensating, run.compensated), 2026-12-04T18:20
-- (clock.forecast_at_risk) and 2026-12-05T01:30 (slot.candidate_added).
CREATE FUNCTION outbox_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written integer;
BEGIN
  -- No enabled endpoint: one probe of a tiny table, and nothing is written.
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoint WHERE enabled) THEN
    RETURN NULL;
  END IF;
  WITH typed AS (
    -- The one place an event loses what the timeline keeps (docs/events.md): an outsider
    -- (actor email:<address>) acts through a magic link, named link:<its id> (the link of
    -- the line, else the one it last used on the run); of the details only those a body
    -- reads are kept (webhook_events.DETAIL_KEYS: no address, name, audience or payload),
    -- and no reason but a cancellation's.
    SELECT l.id, l.run, l.slot, l.at,
           CASE WHEN l.actor LIKE 'email:%' THEN 'link:' || coalesce(
             l.details->>'link',
             (SELECT m.id::text FROM magic_link m
               WHERE m.run = l.run AND m.consumed_at IS NOT NULL
                 AND 'email:' || lower(m.recipient_email) = l.actor
               ORDER BY m.consumed_at DESC, m.id LIMIT 1),
             'unknown')
           ELSE l.actor END AS actor,
           CASE WHEN l.kind = 'run.cancelled' THEN l.reason END AS reason,
           (SELECT coalesce(jsonb_object_agg(d.key, d.value), '{}'::jsonb)
              FROM jsonb_each(l.details) d
             WHERE d.key IN ('slot', 'previous_holder', 'to', 'milestone', 'due_at',
                             'at_risk_at', 'breached', 'added', 'event', 'expires_at',
                             'source', 'target', 'via', 'state', 'reminder', 'firing',
                             'link', 'label', 'child_run', 'child_workflow', 'status',
                             'failure', 'holder', 'step_run',
                             'compensation_workflow', 'probability', 'threshold',
                             'cohort', 'share_elapsed')) AS details,
           CASE l.kind
             WHEN 'run.started' THEN 'run.started'
             WHEN 'run.transitioned' THEN 'run.state_changed'
             WHEN 'run.completed' THEN 'run.ended'
             WHEN 'run.cancelled' THEN 'run.ended'
             WHEN 'slot.opened' THEN 'slot.opened'
             WHEN 'slot.claimed' THEN 'slot.claimed'
             WHEN 'slot.released' THEN 'slot.released'
             WHEN 'slot.assigned' THEN 'slot.assigned'
             WHEN 'slot.reassigned' THEN 'slot.assigned'
             WHEN 'slot.satisfied' THEN 'slot.completed'
             WHEN 'clock.at_risk' THEN 'clock.at_risk'
             WHEN 'clock.forecast_at_risk' THEN 'clock.forecast_at_risk'
             WHEN 'clock.breached' THEN 'clock.breached'
             WHEN 'clock.met' THEN 'clock.met'
             WHEN 'reminder.fired' THEN 'reminder.fired'
             WHEN 'slot.escalated' THEN 'escalation.fired'
             WHEN 'slot.candidate_added' THEN 'slot.candidate_added'
             WHEN 'link.minted' THEN 'link.minted'
             WHEN 'link.used' THEN 'link.used'
             WHEN 'event.buffered' THEN 'event.buffered'
             WHEN 'child.started' THEN 'run.child_started'
             WHEN 'child.ended' THEN 'run.child_ended'
             WHEN 'run.deadline_at_risk' THEN 'run.deadline_at_risk'
             WHEN 'run.deadline_breached' THEN 'run.deadline_breached'
             WHEN 'slot.expired' THEN 'slot.expired'
             WHEN 'subject.gone' THEN 'subject.deleted'
             WHEN 'run.compensating' THEN 'run.compensating'
             WHEN 'run.compensated' THEN 'run.compensated'
             WHEN 'run.compensation_failed' THEN 'run.compensated'
           END AS type, l.kind
    FROM outbox_lines l
  ), events AS (
    INSERT INTO outbox_event (type, line, kind, run, slot, slot_name, workflow, workflow_version,
                              subject_type, subject_external_id, actor, reason, details,
                              occurred_at)
    SELECT t.type, t.id, t.kind, t.run, t.slot, coalesce(s.name, t.details->>'slot'), r.workflow,
           r.definition_version, j.type, j.external_id, t.actor, t.reason,
           t.details, t.at
    FROM typed t
    JOIN run r ON r.id = t.run
    JOIN subject j ON j.id = r.subject
    LEFT JOIN slot s ON s.id = t.slot
    WHERE t.type IS NOT NULL
      AND EXISTS (SELECT 1 FROM webhook_endpoint e
                  WHERE e.enabled
                    AND (cardinality(e.event_types) = 0 OR t.type = ANY(e.event_types))
                    AND (cardinality(e.workflows) = 0 OR r.workflow = ANY(e.workflows)))
    ORDER BY t.id
    RETURNING id, type, run, workflow, occurred_at
  )
  INSERT INTO webhook_delivery (event, endpoint, run, next_at, created_at, since)
  SELECT v.id, e.id, v.run, v.occurred_at, v.occurred_at, v.occurred_at
  FROM events v
  JOIN webhook_endpoint e
    ON e.enabled
   AND (cardinality(e.event_types) = 0 OR v.type = ANY(e.event_types))
   AND (cardinality(e.workflows) = 0 OR v.workflow = ANY(e.workflows))
  ORDER BY v.id, e.id;
  GET DIAGNOSTICS written = ROW_COUNT;
  IF written > 0 THEN
    PERFORM pg_notify('taskflow_webhooks', '');
  END IF;
  RETURN NULL;
END
$$

-- name: outbox_trigger
-- Every writer of timeline lines (use cases, the worker's batches, claim statements in SQL)
-- inserts into audit_event: the outbox is written in the same statement, so in the same
-- transaction as the decision.
CREATE TRIGGER audit_event_outbox AFTER INSERT ON audit_event
REFERENCING NEW TABLE AS outbox_lines
FOR EACH STATEMENT EXECUTE FUNCTION outbox_rows()

-- name: endpoint_insert
-- $1 id, $2 url, $3 description, $4 event types, $5 workflows, $6 secret, $7 creator, $8 now
INSERT INTO webhook_endpoint (id, url, description, event_types, workflows, enabled, secret,
                              created_by, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, true, $6, $7, $8, $8)

-- name: endpoint_get
-- One endpoint: $1 its id.
SELECT id, url, description, event_types, workflows, enabled, secret, previous_secret,
       previous_until, created_by, created_at, updated_at, failing_since, disabled_at,
       disabled_reason
FROM webhook_endpoint WHERE id = $1

-- name: endpoints
-- Every endpoint, oldest first.
SELECT id, url, description, event_types, workflows, enabled, secret, previous_secret,
       previous_until, created_by, created_at, updated_at, failing_since, disabled_at,
       disabled_reason
FROM webhook_endpoint ORDER BY created_at, id

-- name: endpoints_disabled
-- Endpoints the worker disabled because they kept failing, oldest first.
SELECT id, url, description, event_types, workflows, enabled, secret, previous_secret,
       previous_until, created_by, created_at, updated_at, failing_since, disabled_at,
       disabled_reason
FROM webhook_endpoint WHERE NOT enabled AND failing_since IS NOT NULL
ORDER BY disabled_at, id

-- name: endpoint_update
-- $1 id, $2 url, $3 description, $4 event types, $5 workflows, $6 enabled, $7 now; a null
-- leaves the column as it is. Enabling clears the failure record.
UPDATE webhook_endpoint SET
  url = coalesce($2, url),
  description = coalesce($3, description),
  event_types = coalesce($4, event_types),
  workflows = coalesce($5, workflows),
  enabled = coalesce($6, enabled),
  failing_since = CASE WHEN $6::boolean THEN NULL ELSE failing_since END,
  disabled_at = CASE WHEN $6::boolean THEN NULL WHEN NOT $6::boolean THEN $7::timestamptz
                     ELSE disabled_at END,
  disabled_reason = CASE WHEN $6::boolean THEN NULL WHEN NOT $6::boolean THEN 'disabled by hand'
                         ELSE disabled_reason END,
  updated_at = $7
WHERE id = $1

-- name: endpoint_rotate
-- $1 id, $2 new secret, $3 the old secret stays valid until then (null: not at all), $4 now
UPDATE webhook_endpoint SET
  previous_secret = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE secret END,
  previous_until = $3, secret = $2, updated_at = $4
WHERE id = $1

-- name: endpoint_delete
DELETE FROM webhook_endpoint WHERE id = $1

-- name: take_due
-- Due deliveries of enabled endpoints, each the oldest pending one of its run for its
-- endpoint (per-run order), locked FOR UPDATE SKIP LOCKED for the transaction that sends
-- them and records what came of it (owner: the endpoint's creator, whose powers the sender
-- checks). $1 now, $2 how many.
SELECT d.id AS delivery, d.attempts, d.since, d.endpoint, e.created_by AS owner, e.url, e.secret, e.previous_secret,
       e.previous_until, e.failing_since, v.id, v.type, v.kind, v.run, v.slot, v.slot_name,
       v.workflow, v.workflow_version, v.subject_type, v.subject_external_id, v.actor,
       v.reason, v.details, v.occurred_at
FROM webhook_delivery d
JOIN webhook_endpoint e ON e.id = d.endpoint AND e.enabled
JOIN outbox_event v ON v.id = d.event
WHERE d.status = 'pending' AND d.next_at <= $1
  AND NOT EXISTS (SELECT 1 FROM webhook_delivery p
                  WHERE p.endpoint = d.endpoint AND p.run = d.run
                    AND p.status = 'pending' AND p.id < d.id)
ORDER BY d.next_at, d.id
LIMIT $2
FOR UPDATE OF d SKIP LOCKED

-- name: record
-- The outcome of attempts on deliveries this transaction holds locked. $1 ids, $2 statuses
-- (pending | delivered | dead | skipped), $3 next tries, $4 HTTP statuses, $5 errors, $6
-- latencies (ms), $7 when tried. A skipped one was not tried: only its status and why change.
UPDATE webhook_delivery d SET
  status = o.status,
  attempts = d.attempts + CASE WHEN o.status = 'skipped' THEN 0 ELSE 1 END,
  next_at = coalesce(o.next_at, d.next_at),
  last_attempt_at = CASE WHEN o.status = 'skipped' THEN d.last_attempt_at ELSE $7 END,
  last_status = CASE WHEN o.status = 'skipped' THEN d.last_status ELSE o.http END,
  last_error = o.error,
  last_latency_ms = CASE WHEN o.status = 'skipped' THEN d.last_latency_ms ELSE o.latency END,
  delivered_at = CASE WHEN o.status = 'delivered' THEN $7 ELSE d.delivered_at END
FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::int[], $5::text[], $6::float8[])
     AS o(id, status, next_at, http, error, latency)
WHERE d.id = o.id

-- name: endpoint_health
-- $1 endpoints answered, $2 endpoints failing, $3 now, $4 failing this long disables.
-- Returns the endpoints disabled now.
WITH ok AS (
  UPDATE webhook_endpoint SET failing_since = NULL
  WHERE id = ANY($1::uuid[]) AND failing_since IS NOT NULL
)
UPDATE webhook_endpoint SET
  failing_since = coalesce(failing_since, $3::timestamptz),
  enabled = CASE WHEN $3::timestamptz - failing_since >= $4::interval THEN false ELSE enabled END,
  disabled_at = CASE WHEN $3::timestamptz - failing_since >= $4::interval THEN $3::timestamptz
                     ELSE disabled_at END,
  disabled_reason = CASE WHEN $3::timestamptz - failing_since >= $4::interval
                         THEN 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                         ELSE disabled_reason END
WHERE id = ANY($2::uuid[]) AND NOT id = ANY($1::uuid[]) AND enabled
RETURNING id, url, enabled

-- name: next_due
-- The nearest next try of a pending delivery of an enabled endpoint (the worker's sleep).
SELECT min(d.next_at) FROM webhook_delivery d
JOIN webhook_endpoint e ON e.id = d.endpoint AND e.enabled
WHERE d.status = 'pending'

-- name: log
-- An endpoint's deliveries, newest first: $1 endpoint, $2 status or null, $3 before this id
-- (keyset), $4 how many.
SELECT d.id, d.event, d.status, d.attempts, d.next_at, d.last_attempt_at,
       d.last_status, d.last_error, d.last_latency_ms, d.delivered_at, d.created_at,
       v.type, v.run, v.occurred_at
FROM webhook_delivery d JOIN outbox_event v ON v.id = d.event
WHERE d.endpoint = $1 AND ($2::text IS NULL OR d.status = $2) AND d.id < $3
ORDER BY d.id DESC
LIMIT $4

-- name: log_count
SELECT count(*) FROM webhook_delivery d
WHERE d.endpoint = $1 AND ($2::text IS NULL OR d.status = $2)

-- name: replay
-- Send again (same webhook-id): deliveries of endpoint $1, the one numbered $2 or those whose
-- event occurred in [$3, $4); due at $5, their horizon counting from then.
UPDATE webhook_delivery d SET status = 'pending', next_at = $5, since = $5
FROM outbox_event v
WHERE v.id = d.event AND d.endpoint = $1
  AND ($2::bigint IS NULL OR d.id = $2)
  AND ($3::timestamptz IS NULL OR v.occurred_at >= $3)
  AND ($4::timestamptz IS NULL OR v.occurred_at < $4)
RETURNING d.id
