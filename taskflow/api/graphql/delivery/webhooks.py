"""Webhook endpoints in GraphQL: manage them, read their delivery log, replay deliveries.

Admins manage every endpoint; a lead the endpoints they created, while granted their
workflows whole (docs/access.md, rule ``webhooks``). What is sent is in docs/events.md, how in
docs/delivery.md.
"""

from __future__ import annotations

from datetime import datetime

import strawberry

from taskflow.api.graphql.common import listing, relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.enums import DeliveryStatus
from taskflow.api.graphql.common.workspace_type import Held
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import webhook_events
from taskflow.service.delivery import webhooks

TYPE_NAME = "WebhookEndpoint"
DELIVERY = "WebhookDelivery"


@strawberry.type(description="One event sent (or to be sent) to one endpoint.")
class WebhookDelivery:
    id: strawberry.ID = strawberry.field(description="Its global id (replayWebhookDeliveries).")
    event_id: str = strawberry.field(
        description="The webhook-id header: the same on every attempt and replay; receivers "
        "deduplicate by it."
    )
    event_type: str = strawberry.field(description="The event's type (docs/events.md).")
    run_id: strawberry.ID = strawberry.field(description="Global id of the event's run.")
    occurred_at: datetime = strawberry.field(description="When the event happened.")
    state: DeliveryStatus = strawberry.field(description="Where it stands.")
    attempts: int = strawberry.field(description="Attempts made so far.")
    last_attempt_at: datetime | None = strawberry.field(description="When it was last tried.")
    last_status_code: int | None = strawberry.field(
        description="The HTTP status of the last attempt; null when none came (network error)."
    )
    last_error: str | None = strawberry.field(
        description="Why the last attempt failed; null after a success."
    )
    latency_ms: float | None = strawberry.field(
        description="How long the last attempt took, in milliseconds."
    )
    next_attempt_at: datetime | None = strawberry.field(
        description="When it is tried next; null unless PENDING."
    )
    delivered_at: datetime | None = strawberry.field(description="When it was delivered.")

    @classmethod
    def of(cls, row: webhooks.LogRow) -> WebhookDelivery:
        return relay.copied(
            cls,
            row,
            id=relay.node_id(DELIVERY, row.id),
            event_id=webhook_events.message_id(row.event),
            run_id=relay.node_id("Run", row.run_id),
            state=DeliveryStatus(row.status),
            last_status_code=row.last_status,
            latency_ms=row.last_latency_ms,
            next_attempt_at=row.next_at if row.status == "pending" else None,
        )


@strawberry.type(description="Where taskflow POSTs events, signed (Standard Webhooks).")
class WebhookEndpoint(relay.Node, Held):
    url: str = strawberry.field(description="The https URL events are POSTed to.")
    description: str = strawberry.field(description="What it is for, in words.")
    event_types: list[str] = strawberry.field(
        description="The event types it receives; empty: every type."
    )
    workflows: list[str] = strawberry.field(
        description="The workflows whose events it receives; empty: every workflow."
    )
    enabled: bool = strawberry.field(description="False: nothing is sent or queued for it.")
    disabled_at: datetime | None = strawberry.field(description="When it was disabled.")
    disabled_reason: str | None = strawberry.field(
        description="Why it was disabled (by hand, or every delivery failed too long)."
    )
    failing_since: datetime | None = strawberry.field(
        description="Since when every attempt failed; null once one succeeds."
    )
    secret: str = strawberry.field(
        description="The whsec_ secret signing deliveries: verify webhook-signature with it."
    )
    previous_secret_valid_until: datetime | None = strawberry.field(
        description="After rotateWebhookSecret, the previous secret also signs until then."
    )
    created_by: str = strawberry.field(
        description="Who created it: its owner. Events go out only while the owner is active "
        "and may still receive them (else SKIPPED, see docs/security.md)."
    )
    created_at: datetime = strawberry.field(description="When it was created.")
    updated_at: datetime = strawberry.field(description="When it last changed.")
    row: strawberry.Private[webhooks.EndpointRow]

    @listing.connection(DeliveryStatus, "Only deliveries in this state (default: any).")
    async def deliveries(
        self, info: Info, me: Principal, page: listing.Page, state: DeliveryStatus | None
    ) -> relay.Connection[WebhookDelivery]:
        """Its deliveries, newest first: the delivery log."""
        rows, total = await webhooks.log(
            info.context.services,
            me,
            self.row,
            status=state.name.lower() if state is not None else None,
            before=relay.after_id(page.after),
            limit=page.first + 1,
        )
        return relay.connection(
            rows, WebhookDelivery.of, relay.id_cursor, total=total, limit=page.first
        )

    @classmethod
    def of(cls, row: webhooks.EndpointRow) -> WebhookEndpoint:
        return relay.copied(
            cls,
            row,
            event_types=list(row.event_types),
            workflows=list(row.workflows),
            previous_secret_valid_until=row.previous_until if row.previous_secret else None,
            row=row,
        )


async def resolve_node(info: Info, local_id: str) -> WebhookEndpoint | None:
    """``node(id:)`` for an endpoint: those who manage it see it."""
    me = await caller(info)
    row = await webhooks.get(info.context.services, me, local_id)
    return WebhookEndpoint.of(row) if row is not None else None


@strawberry.type(description="Webhook endpoints.")
class WebhookQueries:
    @strawberry.field(
        description="The webhook endpoints the caller manages (admins: all; leads: those they "
        "created, for workflows granted to them), oldest first."
    )
    async def webhook_endpoints(self, info: Info) -> list[WebhookEndpoint]:
        me = await caller(info)
        rows = await webhooks.listing(info.context.services, me)
        return [WebhookEndpoint.of(r) for r in rows]
