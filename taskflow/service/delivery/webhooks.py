"""Webhook endpoints: create, change, rotate secrets, delete; the delivery log and replays.

Admins manage every endpoint; a lead manages the endpoints they created (they own them)
while granted their workflows (``core/access/access.py`` ``may_manage_webhook``). The events
themselves are written by the outbox trigger and sent by the worker
(``service/delivery/webhook_delivery.py``), while the endpoint's owner may still receive them.
"""

from __future__ import annotations

import base64
import dataclasses
import secrets
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import webhook_events
from taskflow.service.access import access
from taskflow.service.common import retry as retries
from taskflow.service.common.container import Services
from taskflow.service.delivery import webhook_net
from taskflow.store.common import db
from taskflow.store.delivery import webhooks as store

EndpointRow = store.EndpointRow
LogRow = store.LogRow
#: How long the previous secret keeps signing after a rotation, unless told otherwise.
DEFAULT_KEEP_PREVIOUS = timedelta(hours=24)


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _only_known(
    given: Sequence[str], known: Collection[str], field: str, says: Callable[[list[str]], str]
) -> list[str]:
    """``given`` sorted without repeats; refused (``says`` the unknown names) unless known."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise errors.ValidationError(says(unknown), field=field)
    return sorted(set(given))


def _check_types(event_types: Sequence[str]) -> list[str]:
    return _only_known(
        event_types,
        webhook_events.EVENT_TYPES,
        "eventTypes",
        lambda unknown: (
            f"Unknown event types {unknown}; the catalog has: "
            f"{', '.join(webhook_events.EVENT_TYPES)} (docs/events.md)."
        ),
    )


def _check_workflows(services: Services, workflows: Sequence[str]) -> list[str]:
    known = sorted(services.catalog.names())
    return _only_known(
        workflows,
        known,
        "workflows",
        lambda unknown: (
            f"No workflow is called {', '.join(map(repr, unknown))} (known: {', '.join(known)})."
        ),
    )


async def _mine(conn: db.Connection, actor: Principal, endpoint_id: str) -> EndpointRow:
    """The endpoint if ``actor`` manages it; NOT_FOUND alike otherwise. Not locked: a sender
    holds deliveries, then writes its endpoint's health; a change that locked the endpoint
    first and then waited for those deliveries (a replay) would deadlock with it."""
    row = await store.get_endpoint(conn, endpoint_id)
    if row is None or not access.may_manage_webhook(actor, row.created_by, row.workflows):
        raise errors.NotFound(f"No webhook endpoint has the id {endpoint_id!r}.", field="id")
    return row


@retries.retried("create the webhook endpoint")
async def create(
    services: Services,
    actor: Principal,
    *,
    url: str,
    description: str,
    event_types: Sequence[str],
    workflows: Sequence[str],
) -> str:
    """A new enabled endpoint (FORBIDDEN beyond the actor's reach); its id."""
    types = _check_types(event_types)
    names = _check_workflows(services, workflows)
    access.require_webhooks(actor, names, "create a webhook endpoint")
    await webhook_net.check_destination(services.settings.webhooks, url, services.resolver)
    async with services.db.transaction() as conn:
        return await store.insert_endpoint(
            conn,
            url=url.strip(),
            description=description,
            event_types=types,
            workflows=names,
            secret=new_secret(),
            created_by=actor.id,
            now=services.clock.now(),
        )


@retries.retried("change the webhook endpoint")
async def update(
    services: Services,
    actor: Principal,
    endpoint_id: str,
    change: webhook_events.EndpointChange,
) -> str:
    """Change what ``change`` gives; enabling again clears the failure record."""
    types = _check_types(change.event_types) if change.event_types is not None else None
    names = _check_workflows(services, change.workflows) if change.workflows is not None else None
    if names is not None:
        access.require_webhooks(actor, names, "point a webhook endpoint at workflows")
    if change.url is not None:
        await webhook_net.check_destination(
            services.settings.webhooks, change.url, services.resolver
        )
    checked = dataclasses.replace(
        change,
        url=change.url.strip() if change.url is not None else None,
        event_types=types,
        workflows=names,
    )
    async with services.db.transaction() as conn:
        await _mine(conn, actor, endpoint_id)
        await store.update_endpoint(conn, endpoint_id, checked, services.clock.now())
    return endpoint_id


@retries.retried("rotate the webhook secret")
async def rotate(
    services: Services, actor: Principal, endpoint_id: str, keep_previous: timedelta | None
) -> str:
    """A new signing secret; the previous one also signs for ``keep_previous`` (None: not)."""
    if keep_previous is not None and not timedelta(0) <= keep_previous <= timedelta(days=30):
        raise errors.ValidationError(
            "keepPreviousSeconds must be between 0 and 2592000 (30 days).",
            field="keepPreviousSeconds",
        )
    now = services.clock.now()
    async with services.db.transaction() as conn:
        await _mine(conn, actor, endpoint_id)
        keep = now + keep_previous if keep_previous else None
        await store.rotate_secret(conn, endpoint_id, new_secret(), keep, now)
    return endpoint_id


@retries.retried("delete the webhook endpoint")
async def delete(services: Services, actor: Principal, endpoint_id: str) -> str:
    """Remove the endpoint and its delivery log."""
    async with services.db.transaction() as conn:
        await _mine(conn, actor, endpoint_id)
        await store.delete_endpoint(conn, endpoint_id)
    return endpoint_id


@retries.retried("replay webhook deliveries")
async def replay(
    services: Services,
    actor: Principal,
    endpoint_id: str,
    *,
    delivery: int | None,
    start: datetime | None,
    end: datetime | None,
) -> int:
    """Send one delivery, or those whose events occurred in [start, end), again (same
    webhook-id: receivers that deduplicate see a replay only if they forgot the id)."""
    if delivery is None and start is None:
        raise errors.ValidationError(
            "Name a deliveryId, or a time range (from, and optionally to) to replay.",
            field="deliveryId",
        )
    if start is not None and end is not None and end <= start:
        raise errors.ValidationError("to must be after from.", field="to")
    async with services.db.transaction() as conn:
        await _mine(conn, actor, endpoint_id)
        return await store.replay(
            conn, endpoint_id, delivery=delivery, start=start, end=end, now=services.clock.now()
        )


async def listing(services: Services, actor: Principal) -> list[EndpointRow]:
    """The endpoints ``actor`` manages (FORBIDDEN for those who manage none)."""
    if not access.manages_webhooks(actor):
        raise errors.Forbidden(
            f"Only admins and leads may read webhook endpoints; {actor.id!r} is neither "
            "(see docs/access.md)."
        )
    async with services.db.connection() as conn:
        rows = await store.endpoints(conn)
    return [r for r in rows if access.may_manage_webhook(actor, r.created_by, r.workflows)]


async def get(services: Services, actor: Principal, endpoint_id: str) -> EndpointRow | None:
    """One endpoint ``actor`` manages, else None (as if it did not exist)."""
    async with services.db.connection() as conn:
        row = await store.get_endpoint(conn, endpoint_id)
    if row is None or not access.may_manage_webhook(actor, row.created_by, row.workflows):
        return None
    return row


async def log(
    services: Services,
    actor: Principal,
    endpoint: EndpointRow,
    *,
    status: str | None,
    before: int | None,
    limit: int,
) -> tuple[list[LogRow], int]:
    """A page of ``endpoint``'s deliveries (the caller already fetched it), newest first."""
    if not access.may_manage_webhook(actor, endpoint.created_by, endpoint.workflows):
        return [], 0
    async with services.db.connection() as conn:
        return await store.log(conn, endpoint.id, status=status, before=before, limit=limit)


async def disabled(services: Services) -> list[EndpointRow]:
    """Endpoints the worker disabled because every attempt failed (needs attention)."""
    async with services.db.connection() as conn:
        return await store.disabled_endpoints(conn)
