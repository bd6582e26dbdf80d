"""Piccolo table classes of the event outbox and the webhooks (``tables.TABLES`` lists them).

``outbox_event`` rows are derived from timeline lines by the ``outbox_rows``
trigger (``schema_extras.OUTBOX_FUNCTION``) in the statement that writes the
lines; ``webhook_delivery`` holds one row per event and subscribed endpoint.
"""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    UUID,
    Array,
    BigInt,
    BigSerial,
    Boolean,
    DoublePrecision,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.columns.base import OnDelete
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table


class WebhookEndpoint(Table, tablename="webhook_endpoint"):
    """Where events are POSTed, which ones, and the secrets that sign them."""

    id = UUID(primary_key=True)
    url = Varchar(length=2000)
    description = Text(default="")
    #: Event types it receives; empty: every type.
    event_types = Array(base_column=Varchar(length=60))
    #: Workflows whose events it receives; empty: every workflow (admins only).
    workflows = Array(base_column=Varchar(length=100))
    enabled = Boolean(default=True)
    #: ``whsec_...``: the one that signs (and the previous one until ``previous_until``).
    secret = Varchar(length=200)
    previous_secret = Varchar(length=200, null=True, default=None)
    previous_until = Timestamptz(null=True, default=None)
    created_by = Varchar(length=200)
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())
    #: Since when every attempt failed (null after a success).
    failing_since = Timestamptz(null=True, default=None)
    disabled_at = Timestamptz(null=True, default=None)
    disabled_reason = Text(null=True, default=None)


class OutboxEvent(Table, tablename="outbox_event"):
    """One event of the catalog (docs/events.md), written with the decision that caused it."""

    id = BigSerial(primary_key=True)
    type = Varchar(length=60)
    #: The timeline line it comes from, and that line's kind.
    line = BigInt()
    kind = Varchar(length=60)
    run = UUID()
    slot = UUID(null=True, default=None)
    slot_name = Varchar(length=100, null=True, default=None)
    workflow = Varchar(length=100)
    workflow_version = Integer()
    subject_type = Varchar(length=100)
    subject_external_id = Varchar(length=200)
    actor = Varchar(length=200, null=True, default=None)
    reason = Text(null=True, default=None)
    #: The timeline line's details; docs/events.md says which of them an event shares.
    details = JSONB(default="{}")
    occurred_at = Timestamptz(default=TimestamptzNow())


class WebhookDelivery(Table, tablename="webhook_delivery"):
    """One event to one endpoint: pending until delivered, or dead past the horizon."""

    id = BigSerial(primary_key=True)
    event = ForeignKey(references=OutboxEvent, null=False, on_delete=OnDelete.cascade)
    endpoint = ForeignKey(references=WebhookEndpoint, null=False, on_delete=OnDelete.cascade)
    #: Copied from the event: deliveries of one run to one endpoint go in order.
    run = UUID()
    #: pending | delivered | dead
    status = Varchar(length=20, default="pending")
    attempts = Integer(default=0)
    next_at = Timestamptz(default=TimestamptzNow())
    last_attempt_at = Timestamptz(null=True, default=None)
    last_status = Integer(null=True, default=None)
    last_error = Text(null=True, default=None)
    last_latency_ms = DoublePrecision(null=True, default=None)
    delivered_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz(default=TimestamptzNow())
    #: The retry horizon counts from here: its creation, or its last replay.
    since = Timestamptz(default=TimestamptzNow())


TABLES: tuple[type[Table], ...] = (WebhookEndpoint, OutboxEvent, WebhookDelivery)
