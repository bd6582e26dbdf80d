"""Webhook endpoint mutations: create, update, rotate the secret, delete, replay deliveries.

Each takes an ``idempotencyKey``, runs its use case through ``keyed.once`` (the use
cases are ``@retry.retried``) and answers a payload union of its success and the
common typed refusals. The types are in ``webhooks.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.targets import OnEndpoint
from taskflow.api.graphql.delivery.webhooks import DELIVERY, TYPE_NAME, WebhookEndpoint
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import webhook_events
from taskflow.service.delivery import webhooks


@strawberry.input(description="A new webhook endpoint; it is enabled with a fresh secret.")
class CreateWebhookEndpointInput:
    url: str = strawberry.field(
        description="Where to POST events: https, on a public address (unless the operator "
        "allows http or private addresses)."
    )
    event_types: list[str] = strawberry.field(
        default_factory=list,
        description="Event types to receive (docs/events.md); empty: every type.",
    )
    workflows: list[str] = strawberry.field(
        default_factory=list,
        description="Workflows whose events to receive; empty: every workflow (admins only).",
    )
    description: str = strawberry.field(default="", description="What it is for, in words.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Change an endpoint: only the fields given change.")
class UpdateWebhookEndpointInput(OnEndpoint):
    url: str | None = strawberry.field(default=None, description="A new URL.")
    event_types: list[str] | None = strawberry.field(
        default=None, description="New event types (empty: every type)."
    )
    workflows: list[str] | None = strawberry.field(
        default=None, description="New workflows (empty: every workflow, admins only)."
    )
    enabled: bool | None = strawberry.field(
        default=None,
        description="false stops sending; true sends again (clears the failure record).",
    )
    description: str | None = strawberry.field(default=None, description="A new description.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Sign with a new secret; the previous one keeps signing a while.")
class RotateWebhookSecretInput(OnEndpoint):
    keep_previous_seconds: int = strawberry.field(
        default=86400,
        description="How long the previous secret also signs (0: not at all; at most 30 days).",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Remove an endpoint and its delivery log.")
class DeleteWebhookEndpointInput(OnEndpoint):
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(
    description="Send deliveries again, due now, with the same webhook-id: one delivery, or "
    "those whose events occurred in [from, to)."
)
class ReplayWebhookDeliveriesInput(OnEndpoint):
    delivery_id: strawberry.ID | None = strawberry.field(
        default=None, description="One delivery's global id."
    )
    from_: datetime | None = strawberry.field(
        default=None, name="from", description="Events that occurred at or after this instant."
    )
    to: datetime | None = strawberry.field(
        default=None, description="... and before this one (default: now)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The endpoint as it stands after the change.")
class WebhookEndpointSuccess:
    endpoint: WebhookEndpoint = strawberry.field(description="The endpoint.")


@strawberry.type(description="The endpoint is gone, with its delivery log.")
class WebhookEndpointDeleted:
    endpoint_id: strawberry.ID = strawberry.field(description="The removed endpoint's global id.")


@strawberry.type(description="Deliveries made pending again, due now.")
class WebhookDeliveriesReplayed:
    count: int = strawberry.field(description="How many deliveries will be sent again.")
    endpoint: WebhookEndpoint = strawberry.field(description="The endpoint.")


WebhookEndpointPayload = Annotated[
    WebhookEndpointSuccess | relay.Common,
    strawberry.union(
        "WebhookEndpointPayload",
        description="Result of createWebhookEndpoint, updateWebhookEndpoint, rotateWebhookSecret.",
    ),
]
DeleteWebhookEndpointPayload = Annotated[
    WebhookEndpointDeleted | relay.Common,
    strawberry.union(
        "DeleteWebhookEndpointPayload", description="Result of deleteWebhookEndpoint."
    ),
]
ReplayWebhookDeliveriesPayload = Annotated[
    WebhookDeliveriesReplayed | relay.Common,
    strawberry.union(
        "ReplayWebhookDeliveriesPayload", description="Result of replayWebhookDeliveries."
    ),
]


def _delivery_id(global_id: str) -> int:
    return relay.number_id(global_id, DELIVERY, "delivery", "deliveryId")


async def _endpoint(info: Info, me: Principal, answer: keyed.Answer) -> WebhookEndpoint:
    row = await webhooks.get(info.context.services, me, str(answer["endpoint"]))
    if row is None:
        raise errors.NotFound("The webhook endpoint is gone.")
    return WebhookEndpoint.of(row)


async def endpoint_success(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> WebhookEndpointSuccess:
    """The endpoint of a mutation's answer as it stands now (NOT_FOUND when gone)."""
    return WebhookEndpointSuccess(endpoint=await _endpoint(info, me, answer))


async def deleted(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> WebhookEndpointDeleted:
    gid = relay.to_global_id(TYPE_NAME, str(answer["endpoint"]))
    return WebhookEndpointDeleted(endpoint_id=strawberry.ID(gid))


async def replayed(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> WebhookDeliveriesReplayed:
    endpoint = await _endpoint(info, me, answer)
    return WebhookDeliveriesReplayed(count=int(answer["count"]), endpoint=endpoint)


@strawberry.type
class WebhookMutations:
    @keyed.mutation(WebhookEndpointPayload, endpoint_success)
    async def create_webhook_endpoint(
        self, info: Info, me: Principal, input: CreateWebhookEndpointInput
    ) -> keyed.Answer:
        """Create a webhook endpoint (admins; leads for their workflows), owned by the caller;
        its secret is in the answer (endpoint.secret)."""
        found = await webhooks.create(
            info.context.services,
            me,
            url=input.url,
            description=input.description,
            event_types=input.event_types,
            workflows=input.workflows,
        )
        return {"endpoint": found}

    @keyed.mutation(WebhookEndpointPayload, endpoint_success)
    async def update_webhook_endpoint(
        self, info: Info, me: Principal, input: UpdateWebhookEndpointInput
    ) -> keyed.Answer:
        """Change a webhook endpoint; enable or disable it."""
        found = await webhooks.update(
            info.context.services,
            me,
            input.local_endpoint_id(),
            relay.copied(webhook_events.EndpointChange, input),
        )
        return {"endpoint": found}

    @keyed.mutation(WebhookEndpointPayload, endpoint_success)
    async def rotate_webhook_secret(
        self, info: Info, me: Principal, input: RotateWebhookSecretInput
    ) -> keyed.Answer:
        """Sign with a new secret from now on; the previous one also signs for keepPreviousSeconds,
        so receivers can switch without losing a delivery."""
        keep = timedelta(seconds=input.keep_previous_seconds)
        local = input.local_endpoint_id()
        return {"endpoint": await webhooks.rotate(info.context.services, me, local, keep)}

    @keyed.mutation(DeleteWebhookEndpointPayload, deleted)
    async def delete_webhook_endpoint(
        self, info: Info, me: Principal, input: DeleteWebhookEndpointInput
    ) -> keyed.Answer:
        """Delete a webhook endpoint and its delivery log."""
        local = input.local_endpoint_id()
        return {"endpoint": await webhooks.delete(info.context.services, me, local)}

    @keyed.mutation(ReplayWebhookDeliveriesPayload, replayed)
    async def replay_webhook_deliveries(
        self, info: Info, me: Principal, input: ReplayWebhookDeliveriesInput
    ) -> keyed.Answer:
        """Send one delivery, or an endpoint's deliveries of a time range, again (same webhook-id),
        due now."""
        local = input.local_endpoint_id()
        count = await webhooks.replay(
            info.context.services,
            me,
            local,
            delivery=_delivery_id(input.delivery_id) if input.delivery_id else None,
            start=input.from_,
            end=input.to,
        )
        return {"endpoint": local, "count": count}
