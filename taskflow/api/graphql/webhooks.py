"""Webhook endpoints in GraphQL: manage them, read their delivery log, replay deliveries.

Admins manage every endpoint; leads those whose workflows they are granted whole
(docs/access.md, rule ``webhooks``). What is sent is in docs/events.md, how in
docs/delivery.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from enum import Enum
from typing import Annotated, Any

import strawberry

from taskflow import errors
from taskflow.api.graphql import keyed, relay
from taskflow.api.graphql.context import Info, caller
from taskflow.core import webhook_events
from taskflow.core.principals import Principal
from taskflow.service import webhooks

TYPE_NAME = "WebhookEndpoint"
DELIVERY = "WebhookDelivery"


@strawberry.enum(description="Where a webhook delivery stands.")
class WebhookDeliveryState(Enum):
    PENDING = strawberry.enum_value(
        "pending", description="Not delivered yet: waits for nextAttemptAt (or is being sent)."
    )
    DELIVERED = strawberry.enum_value(
        "delivered", description="The endpoint answered 2xx (see lastAttemptAt)."
    )
    DEAD = strawberry.enum_value(
        "dead",
        description="Given up: a final answer (4xx other than 429, 3xx), or still failing past "
        "TASKFLOW_WEBHOOK_HORIZON. replayWebhookDeliveries sends it again.",
    )


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
    state: WebhookDeliveryState = strawberry.field(description="Where it stands.")
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
        return cls(
            id=strawberry.ID(relay.to_global_id(DELIVERY, str(row.id))),
            event_id=webhook_events.message_id(row.event),
            event_type=row.event_type,
            run_id=strawberry.ID(relay.to_global_id("Run", row.run_id)),
            occurred_at=row.occurred_at,
            state=WebhookDeliveryState[row.status.upper()],
            attempts=row.attempts,
            last_attempt_at=row.last_attempt_at,
            last_status_code=row.last_status,
            last_error=row.last_error,
            latency_ms=row.last_latency_ms,
            next_attempt_at=row.next_at if row.status == "pending" else None,
            delivered_at=row.delivered_at,
        )


@strawberry.type(description="Where taskflow POSTs events, signed (Standard Webhooks).")
class WebhookEndpoint(relay.Node):
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
    created_by: str = strawberry.field(description="Who created it.")
    created_at: datetime = strawberry.field(description="When it was created.")
    updated_at: datetime = strawberry.field(description="When it last changed.")
    row: strawberry.Private[webhooks.EndpointRow]

    @strawberry.field(description="Its deliveries, newest first: the delivery log.")
    async def deliveries(
        self,
        info: Info,
        first: Annotated[
            int, strawberry.argument(description=f"Page size, at most {relay.MAX_FIRST}.")
        ] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
        state: Annotated[
            WebhookDeliveryState | None,
            strawberry.argument(description="Only deliveries in this state (default: any)."),
        ] = None,
    ) -> relay.Connection[WebhookDelivery]:
        me = await caller(info)
        limit = relay.check_first(first)
        before = None
        if after:
            (text,) = relay.decode_cursor(after, 1)
            if not text.isdigit() or len(text) > 18:
                raise errors.ValidationError("after is not a cursor of this list.", field="after")
            before = int(text)
        rows, total = await webhooks.log(
            info.context.services,
            me,
            self.row,
            status=state.name.lower() if state is not None else None,
            before=before,
            limit=limit + 1,
        )
        edges = [
            relay.Edge(cursor=relay.encode_cursor(str(r.id)), node=WebhookDelivery.of(r))
            for r in rows[:limit]
        ]
        return relay.Connection(
            edges=edges,
            page_info=relay.PageInfo(
                has_next_page=len(rows) > limit, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=total,
        )

    @classmethod
    def of(cls, row: webhooks.EndpointRow) -> WebhookEndpoint:
        return cls(
            id=strawberry.ID(relay.to_global_id(TYPE_NAME, row.id)),
            url=row.url,
            description=row.description,
            event_types=list(row.event_types),
            workflows=list(row.workflows),
            enabled=row.enabled,
            disabled_at=row.disabled_at,
            disabled_reason=row.disabled_reason,
            failing_since=row.failing_since,
            secret=row.secret,
            previous_secret_valid_until=row.previous_until if row.previous_secret else None,
            created_by=row.created_by,
            created_at=row.created_at,
            updated_at=row.updated_at,
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
        description="The webhook endpoints the caller manages (admins: all; leads: those of "
        "their workflows), oldest first."
    )
    async def webhook_endpoints(self, info: Info) -> list[WebhookEndpoint]:
        me = await caller(info)
        rows = await webhooks.listing(info.context.services, me)
        return [WebhookEndpoint.of(r) for r in rows]


# -- mutations -----------------------------------------------------------------------------------


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
class UpdateWebhookEndpointInput:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")
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
class RotateWebhookSecretInput:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")
    keep_previous_seconds: int = strawberry.field(
        default=86400,
        description="How long the previous secret also signs (0: not at all; at most 30 days).",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Remove an endpoint and its delivery log.")
class DeleteWebhookEndpointInput:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(
    description="Send deliveries again, due now, with the same webhook-id: one delivery, or "
    "those whose events occurred in [from, to)."
)
class ReplayWebhookDeliveriesInput:
    endpoint_id: strawberry.ID = strawberry.field(description="The endpoint's global id.")
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


_REFUSALS = (
    relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | relay.IdempotencyKeyReused
    | relay.Busy
)
WebhookEndpointPayload = Annotated[
    WebhookEndpointSuccess | _REFUSALS,
    strawberry.union(
        "WebhookEndpointPayload",
        description="Result of createWebhookEndpoint, updateWebhookEndpoint, rotateWebhookSecret.",
    ),
]
DeleteWebhookEndpointPayload = Annotated[
    WebhookEndpointDeleted | _REFUSALS,
    strawberry.union(
        "DeleteWebhookEndpointPayload", description="Result of deleteWebhookEndpoint."
    ),
]
ReplayWebhookDeliveriesPayload = Annotated[
    WebhookDeliveriesReplayed | _REFUSALS,
    strawberry.union(
        "ReplayWebhookDeliveriesPayload", description="Result of replayWebhookDeliveries."
    ),
]


def _endpoint_id(global_id: str, field: str = "endpointId") -> str:
    found_type, local = relay.from_global_id(str(global_id), field)
    if found_type != TYPE_NAME:
        raise errors.NotFound(f"No webhook endpoint has the id {global_id!r}.", field=field)
    return local


def _delivery_id(global_id: str) -> int:
    found_type, local = relay.from_global_id(str(global_id), "deliveryId")
    if found_type != DELIVERY or not local.isdigit() or len(local) > 18:
        raise errors.NotFound(f"No delivery has the id {global_id!r}.", field="deliveryId")
    return int(local)


async def _keyed(
    info: Info, me: Principal, operation: str, input: Any, work: Callable[[], Awaitable[Any]]
) -> tuple[keyed.Answer | None, Any]:
    """The answer under the input's idempotency key, or the typed refusal."""
    try:
        answer, _ = await keyed.once(info, me.id, operation, input, work)
    except errors.TaskflowError as exc:
        return None, relay.refusal_for(exc)
    return answer, None


async def _endpoint_answer(
    info: Info, me: Principal, operation: str, input: Any, work: Callable[[], Awaitable[str]]
) -> WebhookEndpointPayload:
    async def keyed_work() -> keyed.Answer:
        return {"endpoint": await work()}

    answer, refused = await _keyed(info, me, operation, input, keyed_work)
    if answer is None:
        out: WebhookEndpointPayload = refused
        return out
    row = await webhooks.get(info.context.services, me, str(answer["endpoint"]))
    if row is None:
        gone: WebhookEndpointPayload = relay.refusal_for(errors.NotFound("The endpoint is gone."))
        return gone
    return WebhookEndpointSuccess(endpoint=WebhookEndpoint.of(row))


@strawberry.type
class WebhookMutations:
    @strawberry.mutation(
        description="Create a webhook endpoint (admins; leads for their workflows); its secret "
        "is in the answer (endpoint.secret)."
    )
    async def create_webhook_endpoint(
        self,
        info: Info,
        input: Annotated[CreateWebhookEndpointInput, strawberry.argument(description="What.")],
    ) -> WebhookEndpointPayload:
        me = await caller(info)

        async def work() -> str:
            return await webhooks.create(
                info.context.services,
                me,
                url=input.url,
                description=input.description,
                event_types=input.event_types,
                workflows=input.workflows,
            )

        return await _endpoint_answer(info, me, "createWebhookEndpoint", input, work)

    @strawberry.mutation(description="Change a webhook endpoint; enable or disable it.")
    async def update_webhook_endpoint(
        self,
        info: Info,
        input: Annotated[UpdateWebhookEndpointInput, strawberry.argument(description="What.")],
    ) -> WebhookEndpointPayload:
        me = await caller(info)

        async def work() -> str:
            return await webhooks.update(
                info.context.services,
                me,
                _endpoint_id(input.endpoint_id),
                url=input.url,
                description=input.description,
                event_types=input.event_types,
                workflows=input.workflows,
                enabled=input.enabled,
            )

        return await _endpoint_answer(info, me, "updateWebhookEndpoint", input, work)

    @strawberry.mutation(
        description="Sign with a new secret from now on; the previous one also signs for "
        "keepPreviousSeconds, so receivers can switch without losing a delivery."
    )
    async def rotate_webhook_secret(
        self,
        info: Info,
        input: Annotated[RotateWebhookSecretInput, strawberry.argument(description="What.")],
    ) -> WebhookEndpointPayload:
        me = await caller(info)

        async def work() -> str:
            keep = timedelta(seconds=input.keep_previous_seconds)
            return await webhooks.rotate(
                info.context.services, me, _endpoint_id(input.endpoint_id), keep
            )

        return await _endpoint_answer(info, me, "rotateWebhookSecret", input, work)

    @strawberry.mutation(description="Delete a webhook endpoint and its delivery log.")
    async def delete_webhook_endpoint(
        self,
        info: Info,
        input: Annotated[DeleteWebhookEndpointInput, strawberry.argument(description="What.")],
    ) -> DeleteWebhookEndpointPayload:
        me = await caller(info)

        async def work() -> keyed.Answer:
            local = _endpoint_id(input.endpoint_id)
            return {"endpoint": await webhooks.delete(info.context.services, me, local)}

        answer, refused = await _keyed(info, me, "deleteWebhookEndpoint", input, work)
        if answer is None:
            out: DeleteWebhookEndpointPayload = refused
            return out
        gid = relay.to_global_id(TYPE_NAME, str(answer["endpoint"]))
        return WebhookEndpointDeleted(endpoint_id=strawberry.ID(gid))

    @strawberry.mutation(
        description="Send one delivery, or an endpoint's deliveries of a time range, again "
        "(same webhook-id), due now."
    )
    async def replay_webhook_deliveries(
        self,
        info: Info,
        input: Annotated[ReplayWebhookDeliveriesInput, strawberry.argument(description="What.")],
    ) -> ReplayWebhookDeliveriesPayload:
        me = await caller(info)
        services = info.context.services

        async def work() -> keyed.Answer:
            local = _endpoint_id(input.endpoint_id)
            count = await webhooks.replay(
                services,
                me,
                local,
                delivery=_delivery_id(input.delivery_id) if input.delivery_id else None,
                start=input.from_,
                end=input.to,
            )
            return {"endpoint": local, "count": count}

        answer, refused = await _keyed(info, me, "replayWebhookDeliveries", input, work)
        if answer is None:
            out: ReplayWebhookDeliveriesPayload = refused
            return out
        row = await webhooks.get(services, me, str(answer["endpoint"]))
        if row is None:
            gone: ReplayWebhookDeliveriesPayload = relay.refusal_for(
                errors.NotFound("The endpoint is gone.")
            )
            return gone
        return WebhookDeliveriesReplayed(
            count=int(answer["count"]), endpoint=WebhookEndpoint.of(row)
        )
