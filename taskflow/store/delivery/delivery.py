"""Delivering notifications: leased takes (SKIP LOCKED), marks by lease, the deliverable list.

A take leases a batch to one sender (a lease id, until an instant); only the
holder of the lease marks a notification sent or failed, so a sender whose lease
ran out and was taken over cannot mark it (``core.delivery`` has the states).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from taskflow.store.common import db, sql
from taskflow.store.delivery import notifications as outbox

SQL = sql.statements("delivery/delivery")


async def take(
    conn: db.Connection,
    *,
    now: datetime,
    lease: str,
    until: datetime,
    limit: int,
    workflows: Sequence[str] | None,
    outsiders_only: bool = False,
    with_address: bool = False,
) -> list[outbox.NotificationRow]:
    """Lease up to ``limit`` deliverable notifications, in ``deliver_at`` order."""
    rows = await conn.fetch(
        SQL["take"],
        now,
        uuid.UUID(lease),
        until,
        limit,
        list(workflows) if workflows is not None else None,
        outsiders_only,
        with_address,
    )
    found = [outbox.row_of(r) for r in rows]
    return sorted(found, key=lambda n: (n.deliver_at, n.id))


async def deliverable(
    conn: db.Connection,
    *,
    now: datetime,
    after_id: int,
    limit: int,
    workflows: Sequence[str] | None,
    outsiders_only: bool,
    recipient: str | None,
) -> list[outbox.NotificationRow]:
    """Deliverable notifications (what a take would lease now), oldest first by id."""
    rows = await conn.fetch(
        SQL["deliverable"],
        now,
        after_id,
        limit,
        list(workflows) if workflows is not None else None,
        outsiders_only,
        recipient,
    )
    return [outbox.row_of(r) for r in rows]


async def held(
    conn: db.Connection, notification_id: int, lease: str
) -> outbox.NotificationRow | None:
    """The notification, locked, if ``lease`` still holds it; else None."""
    row = await conn.fetchrow(SQL["held"], notification_id, uuid.UUID(lease))
    return outbox.row_of(row) if row is not None else None


async def mark_sent(
    conn: db.Connection, notification_id: int, lease: str, at: datetime
) -> outbox.NotificationRow | None:
    """Mark it sent if ``lease`` holds it (None: it does not)."""
    row = await conn.fetchrow(SQL["mark_sent"], notification_id, uuid.UUID(lease), at)
    return outbox.row_of(row) if row is not None else None


async def mark_failed(
    conn: db.Connection,
    notification_id: int,
    lease: str,
    *,
    state: str,
    retry_at: datetime | None,
    error: str,
) -> outbox.NotificationRow | None:
    """Mark it failed (to retry from ``retry_at``) or dead, if ``lease`` holds it."""
    row = await conn.fetchrow(
        SQL["mark_failed"], notification_id, uuid.UUID(lease), state, retry_at, error
    )
    return outbox.row_of(row) if row is not None else None


async def by_ids(conn: db.Connection, ids: Sequence[int]) -> list[outbox.NotificationRow]:
    return [outbox.row_of(r) for r in await conn.fetch(SQL["by_ids"], list(ids))]
