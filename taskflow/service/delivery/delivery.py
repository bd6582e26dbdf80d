"""Delivering notifications for outside senders: take a leased batch, mark each sent or failed.

``takeNotifications`` leases deliverable notifications (``deliver_at`` come, not
sent, not leased by a live lease) to one sender with ``FOR UPDATE SKIP LOCKED``,
so several senders never get the same one; the sender then marks each with the
lease it got. The worker's e-mail step (``service/delivery/mail.py``) takes the same way.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow import errors
from taskflow.core.access import access as access_rules
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import delivery as core
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.store.delivery import delivery as store
from taskflow.store.delivery import notifications as outbox
from taskflow.store.runs import runs as run_rows


@dataclass(frozen=True)
class Taken:
    """A leased batch: the lease's id (to mark with) and when it runs out."""

    lease: str
    until: datetime
    notifications: list[outbox.NotificationRow]


def _workflows(actor: Principal, action: str) -> list[str] | None:
    access.require_integration(actor, action)
    found = access_rules.workflows_of(access_rules.application(actor))
    return sorted(found) if found is not None else None


@retry.retried("take notifications")
async def take(
    services: Services,
    actor: Principal,
    *,
    limit: int,
    lease_seconds: int = core.LEASE_DEFAULT,
    outsiders_only: bool = False,
) -> Taken:
    """Lease up to ``limit`` deliverable notifications of the actor's workflows."""
    workflows = _workflows(actor, "take notifications to send")
    count = core.check_take_limit(limit)
    length = core.check_lease_seconds(lease_seconds)
    return await take_as_sender(
        services, limit=count, lease=length, workflows=workflows, outsiders_only=outsiders_only
    )


async def take_as_sender(
    services: Services,
    *,
    limit: int,
    lease: timedelta,
    workflows: Sequence[str] | None = None,
    outsiders_only: bool = False,
    with_address: bool = False,
) -> Taken:
    """The take itself, for a trusted sender (the worker's e-mail step) or :func:`take`."""
    now = services.clock.now()
    lease_id = str(uuid.uuid4())
    async with services.db.transaction() as conn:
        rows = await store.take(
            conn,
            now=now,
            lease=lease_id,
            until=now + lease,
            limit=limit,
            workflows=workflows,
            outsiders_only=outsiders_only,
            with_address=with_address,
        )
    return Taken(lease=lease_id, until=now + lease, notifications=rows)


async def taken_again(services: Services, ids: Sequence[int]) -> list[outbox.NotificationRow]:
    """The notifications of an earlier take, as they are now (an idempotent replay)."""
    async with services.db.connection() as conn:
        return await store.by_ids(conn, ids)


async def reachable(
    services: Services, actor: Principal, notification_id: int
) -> outbox.NotificationRow:
    """The notification, when its run is of a workflow the application may start (it
    delivers or links for those); NOT_FOUND otherwise, as for an id that names none."""
    async with services.db.connection() as conn:
        found = await outbox.notification(conn, notification_id)
        run = await run_rows.get_run(conn, found.run_id) if found is not None else None
    if found is None or run is None or not access_rules.may_start(actor, run.view.workflow):
        raise errors.NotFound(f"No notification has the id {notification_id}.")
    return found


async def _check_reach(services: Services, actor: Principal, notification_id: int) -> None:
    access.require_integration(actor, "mark notifications")
    await reachable(services, actor, notification_id)


def _lease_lost(notification_id: int) -> core.LeaseLost:
    return core.LeaseLost(
        f"Notification {notification_id} is not leased to you any more: your lease ran out "
        "and another sender took it, or it was marked already. Do not mark it; take again."
    )


@retry.retried("mark a notification sent")
async def mark_sent(
    services: Services, actor: Principal, notification_id: int, lease: str
) -> outbox.NotificationRow:
    """Mark a leased notification sent (only the lease's holder may)."""
    await _check_reach(services, actor, notification_id)
    lease_id = _lease_id(lease)
    async with services.db.transaction() as conn:
        row = await store.mark_sent(conn, notification_id, lease_id, services.clock.now())
    if row is None:
        raise _lease_lost(notification_id)
    return row


@retry.retried("mark a notification failed")
async def mark_failed(
    services: Services,
    actor: Principal,
    notification_id: int,
    lease: str,
    *,
    error: str,
    permanent: bool,
) -> outbox.NotificationRow:
    """Mark a leased notification failed: tried again after a backoff, or dead."""
    await _check_reach(services, actor, notification_id)
    return await failed(
        services, notification_id, _lease_id(lease), error=error, permanent=permanent
    )


async def failed(
    services: Services, notification_id: int, lease: str, *, error: str, permanent: bool
) -> outbox.NotificationRow:
    """Record a failed send by the lease's holder (``LeaseLost`` if it holds it no more)."""
    now = services.clock.now()
    async with services.db.transaction() as conn:
        held = await store.held(conn, notification_id, lease)
        if held is None:
            raise _lease_lost(notification_id)
        state, retry_at = core.after_failure(held.attempts, permanent, now)
        row = await store.mark_failed(
            conn,
            notification_id,
            lease,
            state=state.value,
            retry_at=retry_at,
            error=core.short_error(error) or "unknown error",
        )
    assert row is not None  # held above, in this transaction
    return row


def _lease_id(lease: str) -> str:
    try:
        return str(uuid.UUID(lease))
    except ValueError:
        raise errors.ValidationError(
            "lease is not a lease id: pass the lease takeNotifications answered.", field="lease"
        ) from None
