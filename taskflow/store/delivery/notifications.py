"""The notification outbox: a message per recipient, readable by integrations and in GraphQL.

A recipient is a principal's id, or ``email:<address>`` for an outsider (see
``core.recipients``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns

_COLUMNS = (
    "id, recipient, recipient_email, recipient_name, run, slot, kind, message, details, "
    "created_at, deliver_at, link_requested, link, "
    "delivery_state, attempts, last_error, lease_until, retry_at, sent_at"
)

#: The statements of ``delivery/notifications.sql``, the column list filled in.
SQL = with_columns(sql.statements("delivery/notifications"), columns=_COLUMNS)


@dataclass(frozen=True)
class NotificationRow:
    id: int
    recipient: str
    run_id: str
    slot_id: str | None
    kind: str
    message: str
    details: dict[str, Any]
    created_at: datetime
    deliver_at: datetime
    recipient_email: str | None = None
    recipient_name: str | None = None
    link_requested: bool = False
    #: The last link minted for it, if any.
    link_id: str | None = None
    #: Delivery (``core.delivery``): state, takes, last failure, lease, next try, sent.
    delivery_state: str = "pending"
    attempts: int = 0
    last_error: str | None = None
    lease_until: datetime | None = None
    retry_at: datetime | None = None
    sent_at: datetime | None = None


@dataclass(frozen=True)
class NewNotification:
    """A notification to write (the outbox assigns its id)."""

    recipient: str
    run_id: str
    slot_id: str | None
    kind: str
    message: str
    created_at: datetime
    deliver_at: datetime
    details: Mapping[str, Any] = field(default_factory=dict)
    recipient_email: str | None = None
    recipient_name: str | None = None
    link_requested: bool = False


def row_of(r: asyncpg.Record) -> NotificationRow:
    return db.record_as(NotificationRow, r, columns=db.REFERENCES)


async def notify(conn: db.Connection, rows: Iterable[NewNotification]) -> None:
    """Write notifications, in one statement."""
    args = [
        (
            n.recipient,
            n.recipient_email,
            n.recipient_name,
            uuid.UUID(n.run_id),
            uuid.UUID(n.slot_id) if n.slot_id else None,
            n.kind,
            n.message,
            dict(n.details),
            n.created_at,
            n.deliver_at,
            n.link_requested,
        )
        for n in rows
    ]
    if args:
        await conn.executemany(SQL["insert"], args)


async def listing(
    conn: db.Connection,
    *,
    recipient: str | None,
    outsiders_only: bool = False,
    after_id: int,
    limit: int,
    workflows: Sequence[str] | None = None,
) -> tuple[list[NotificationRow], int | None]:
    """Notifications oldest first, and how many there are in all (one recipient's only).

    ``recipient`` narrows to one recipient (counted: the index holds them together);
    ``outsiders_only`` to outsiders' (``email:...``); neither gives the whole outbox.
    The outbox-wide listings are not counted: a sender polls them, and counting the
    whole table each time would cost more than the page. ``workflows`` narrows them to
    the runs of those workflows (an integration's grants).
    """
    # One statement per case (not "$1 IS NULL OR ..."), so each keeps its own index plan.
    args: list[Any] = []
    total = None
    if recipient is not None:
        total = await conn.fetchval(SQL["count_of_recipient"], recipient)
        text, args = SQL["page_of_recipient"], [recipient]
    elif workflows is not None:
        outsiders = SQL["page_of_outsiders_in_workflows"]
        text = outsiders if outsiders_only else SQL["page_in_workflows"]
        args = [list(workflows)]
    else:
        text = SQL["page_of_outsiders"] if outsiders_only else SQL["page"]
    rows = await conn.fetch(text, *args, after_id, limit)
    return [row_of(r) for r in rows], (int(total) if total is not None else None)


async def notification(
    conn: db.Connection, notification_id: int, *, lock: bool = False
) -> NotificationRow | None:
    """One notification by id (``lock``: FOR UPDATE, so link minting for it goes in turn)."""
    row = await conn.fetchrow(SQL["one_locked"] if lock else SQL["one"], notification_id)
    return row_of(row) if row is not None else None


async def set_link(conn: db.Connection, notification_id: int, link_id: str) -> None:
    """Remember the link last minted for a notification."""
    await conn.execute(SQL["set_link"], notification_id, uuid.UUID(link_id))
