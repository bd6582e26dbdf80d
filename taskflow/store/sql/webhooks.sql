-- The event outbox and webhook deliveries (store/webhooks.py, docs/events.md, docs/delivery.md).

-- name: outbox_function
-- The trigger function deriving outbox events (and one delivery per subscribed endpoint)
-- from the timeline lines a statement inserted; created by migration 2026-12-01T21:36.
CREATE FUNCTION outbox_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written integer;
BEGIN
  -- No enabled endpoint: one probe of a tiny table, and nothing is written.
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoint WHERE enabled) THEN
    RETURN NULL;
  END IF;
  WITH typed AS (
    SELECT l.id, l.run, l.slot, l.actor, l.reason, l.details, l.at,
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
             WHEN 'clock.breached' THEN 'clock.breached'
             WHEN 'clock.met' THEN 'clock.met'
             WHEN 'reminder.fired' THEN 'reminder.fired'
             WHEN 'slot.escalated' THEN 'escalation.fired'
             WHEN 'link.minted' THEN 'link.minted'
             WHEN 'link.used' THEN 'link.used'
             WHEN 'event.buffered' THEN 'event.buffered'
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
  INSERT INTO webhook_delivery (event, endpoint, run, next_at, created_at)
  SELECT v.id, e.id, v.run, v.occurred_at, v.occurred_at
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
