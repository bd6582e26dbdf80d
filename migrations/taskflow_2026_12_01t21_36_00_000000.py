"""The event outbox and webhooks: endpoints, events, deliveries, and the trigger that writes
events from timeline lines in the statement that inserts them (docs/events.md, docs/delivery.md).
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-01T21:36:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "event outbox and webhooks"

TABLES = [
    'CREATE TABLE "webhook_endpoint" ("id" UUID PRIMARY KEY NOT NULL DEFAULT gen_random_uuid(), "url" VARCHAR(2000) NOT NULL DEFAULT \'\', "description" TEXT NOT NULL DEFAULT \'\', "event_types" VARCHAR(60)[] NOT NULL DEFAULT \'{{}}\', "workflows" VARCHAR(100)[] NOT NULL DEFAULT \'{{}}\', "enabled" BOOLEAN NOT NULL DEFAULT true, "secret" VARCHAR(200) NOT NULL DEFAULT \'\', "previous_secret" VARCHAR(200) DEFAULT null, "previous_until" TIMESTAMPTZ DEFAULT null, "created_by" VARCHAR(200) NOT NULL DEFAULT \'\', "created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "updated_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "failing_since" TIMESTAMPTZ DEFAULT null, "disabled_at" TIMESTAMPTZ DEFAULT null, "disabled_reason" TEXT DEFAULT null)',
    'CREATE TABLE "outbox_event" ("id" BIGSERIAL PRIMARY KEY NOT NULL, "type" VARCHAR(60) NOT NULL DEFAULT \'\', "line" BIGINT NOT NULL DEFAULT 0, "kind" VARCHAR(60) NOT NULL DEFAULT \'\', "run" UUID NOT NULL DEFAULT gen_random_uuid(), "slot" UUID DEFAULT null, "slot_name" VARCHAR(100) DEFAULT null, "workflow" VARCHAR(100) NOT NULL DEFAULT \'\', "workflow_version" INTEGER NOT NULL DEFAULT 0, "subject_type" VARCHAR(100) NOT NULL DEFAULT \'\', "subject_external_id" VARCHAR(200) NOT NULL DEFAULT \'\', "actor" VARCHAR(200) DEFAULT null, "reason" TEXT DEFAULT null, "details" JSONB NOT NULL DEFAULT \'{{}}\', "occurred_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)',
    'CREATE TABLE "webhook_delivery" ("id" BIGSERIAL PRIMARY KEY NOT NULL, "event" BIGINT NOT NULL REFERENCES "outbox_event" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, "endpoint" UUID NOT NULL REFERENCES "webhook_endpoint" ("id") ON DELETE CASCADE ON UPDATE CASCADE DEFAULT null, "run" UUID NOT NULL DEFAULT gen_random_uuid(), "status" VARCHAR(20) NOT NULL DEFAULT \'pending\', "attempts" INTEGER NOT NULL DEFAULT 0, "next_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "last_attempt_at" TIMESTAMPTZ DEFAULT null, "last_status" INTEGER DEFAULT null, "last_error" TEXT DEFAULT null, "last_latency_ms" DOUBLE PRECISION DEFAULT null, "delivered_at" TIMESTAMPTZ DEFAULT null, "created_at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp, "since" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)',
]

INDEXES = [
    "CREATE INDEX webhook_delivery_due ON webhook_delivery (next_at, id) WHERE status = 'pending'",
    "CREATE INDEX webhook_delivery_queue ON webhook_delivery (endpoint, run, id) WHERE status = 'pending'",
    "CREATE INDEX webhook_delivery_endpoint ON webhook_delivery (endpoint, id)",
    "CREATE INDEX outbox_event_occurred ON outbox_event (occurred_at)",
]

FUNCTION = "-- The trigger function deriving outbox events (and one delivery per subscribed endpoint)\n-- from the timeline lines a statement inserted; created by migration 2026-12-01T21:36.\nCREATE FUNCTION outbox_rows() RETURNS trigger LANGUAGE plpgsql AS $$\nDECLARE\n  written integer;\nBEGIN\n  -- No enabled endpoint: one probe of a tiny table, and nothing is written.\n  IF NOT EXISTS (SELECT 1 FROM webhook_endpoint WHERE enabled) THEN\n    RETURN NULL;\n  END IF;\n  WITH typed AS (\n    SELECT l.id, l.run, l.slot, l.actor, l.reason, l.details, l.at,\n           CASE l.kind\n             WHEN 'run.started' THEN 'run.started'\n             WHEN 'run.transitioned' THEN 'run.state_changed'\n             WHEN 'run.completed' THEN 'run.ended'\n             WHEN 'run.cancelled' THEN 'run.ended'\n             WHEN 'slot.opened' THEN 'slot.opened'\n             WHEN 'slot.claimed' THEN 'slot.claimed'\n             WHEN 'slot.released' THEN 'slot.released'\n             WHEN 'slot.assigned' THEN 'slot.assigned'\n             WHEN 'slot.reassigned' THEN 'slot.assigned'\n             WHEN 'slot.satisfied' THEN 'slot.completed'\n             WHEN 'clock.breached' THEN 'clock.breached'\n             WHEN 'clock.met' THEN 'clock.met'\n             WHEN 'reminder.fired' THEN 'reminder.fired'\n             WHEN 'slot.escalated' THEN 'escalation.fired'\n             WHEN 'link.minted' THEN 'link.minted'\n             WHEN 'link.used' THEN 'link.used'\n             WHEN 'event.buffered' THEN 'event.buffered'\n           END AS type, l.kind\n    FROM outbox_lines l\n  ), events AS (\n    INSERT INTO outbox_event (type, line, kind, run, slot, slot_name, workflow, workflow_version,\n                              subject_type, subject_external_id, actor, reason, details,\n                              occurred_at)\n    SELECT t.type, t.id, t.kind, t.run, t.slot, coalesce(s.name, t.details->>'slot'), r.workflow,\n           r.definition_version, j.type, j.external_id, t.actor, t.reason,\n           t.details, t.at\n    FROM typed t\n    JOIN run r ON r.id = t.run\n    JOIN subject j ON j.id = r.subject\n    LEFT JOIN slot s ON s.id = t.slot\n    WHERE t.type IS NOT NULL\n      AND EXISTS (SELECT 1 FROM webhook_endpoint e\n                  WHERE e.enabled\n                    AND (cardinality(e.event_types) = 0 OR t.type = ANY(e.event_types))\n                    AND (cardinality(e.workflows) = 0 OR r.workflow = ANY(e.workflows)))\n    ORDER BY t.id\n    RETURNING id, type, run, workflow, occurred_at\n  )\n  INSERT INTO webhook_delivery (event, endpoint, run, next_at, created_at, since)\n  SELECT v.id, e.id, v.run, v.occurred_at, v.occurred_at, v.occurred_at\n  FROM events v\n  JOIN webhook_endpoint e\n    ON e.enabled\n   AND (cardinality(e.event_types) = 0 OR v.type = ANY(e.event_types))\n   AND (cardinality(e.workflows) = 0 OR v.workflow = ANY(e.workflows))\n  ORDER BY v.id, e.id;\n  GET DIAGNOSTICS written = ROW_COUNT;\n  IF written > 0 THEN\n    PERFORM pg_notify('taskflow_webhooks', '');\n  END IF;\n  RETURN NULL;\nEND\n$$"

TRIGGER = "-- Every writer of timeline lines (use cases, the worker's batches, claim statements in SQL)\n-- inserts into audit_event: the outbox is written in the same statement, so in the same\n-- transaction as the decision.\nCREATE TRIGGER audit_event_outbox AFTER INSERT ON audit_event\nREFERENCING NEW TABLE AS outbox_lines\nFOR EACH STATEMENT EXECUTE FUNCTION outbox_rows()"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        for statement in (*TABLES, *INDEXES, FUNCTION, TRIGGER):
            await _Raw.raw(statement)

    async def drop() -> None:
        await _Raw.raw("DROP TRIGGER IF EXISTS audit_event_outbox ON audit_event")
        await _Raw.raw("DROP FUNCTION IF EXISTS outbox_rows()")
        for table in ("webhook_delivery", "outbox_event", "webhook_endpoint"):
            await _Raw.raw(f'DROP TABLE IF EXISTS "{table}"')

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
