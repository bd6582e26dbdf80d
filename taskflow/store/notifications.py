"""The notification outbox: a message per recipient, readable by integrations and in GraphQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.store import db


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


async def notify(
    conn: db.Connection,
    rows: Iterable[tuple[str, str, str | None, str, str, Mapping[str, Any], datetime, datetime]],
) -> None:
    """Write notifications: (recipient, run, slot, kind, message, details, created, deliver)."""
    args = [
        (rcp, uuid.UUID(run), uuid.UUID(slot) if slot else None, kind, msg, dict(d), c, dl)
        for rcp, run, slot, kind, msg, d, c, dl in rows
    ]
    if args:
        await conn.executemany(
            "INSERT INTO notification (recipient, run, slot, kind, message, details, created_at, "
            "deliver_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            args,
        )


async def notifications_for(
    conn: db.Connection, recipient: str, *, after_id: int, limit: int
) -> tuple[list[NotificationRow], int]:
    """A recipient's notifications, oldest first, and how many there are in all."""
    total = await conn.fetchval("SELECT count(*) FROM notification WHERE recipient = $1", recipient)
    rows = await conn.fetch(
        "SELECT id, recipient, run, slot, kind, message, details, created_at, deliver_at "
        "FROM notification WHERE recipient = $1 AND id > $2 ORDER BY id LIMIT $3",
        recipient,
        after_id,
        limit,
    )
    return [
        NotificationRow(
            id=r["id"],
            recipient=r["recipient"],
            run_id=str(r["run"]),
            slot_id=str(r["slot"]) if r["slot"] else None,
            kind=r["kind"],
            message=r["message"],
            details=r["details"],
            created_at=r["created_at"],
            deliver_at=r["deliver_at"],
        )
        for r in rows
    ], int(total)


async def principals_with_keys(conn: db.Connection, keys: Sequence[str]) -> list[str]:
    """Active principals carrying any of ``keys`` (the prefilter of an audience)."""
    if "any" in keys:
        rows = await conn.fetch("SELECT id FROM principal WHERE active ORDER BY id")
        return [r["id"] for r in rows]
    rows = await conn.fetch(
        """
        SELECT id FROM principal
        WHERE active AND (
            ('user:' || id) = ANY($1::text[])
            OR ('email:' || coalesce(email, '')) = ANY($1::text[])
            OR EXISTS (SELECT 1 FROM unnest(roles) r WHERE 'role:' || r = ANY($1::text[]))
            OR EXISTS (SELECT 1 FROM unnest(groups) g WHERE 'group:' || g = ANY($1::text[])))
        ORDER BY id
        """,
        list(keys),
    )
    return [r["id"] for r in rows]


async def notification(conn: db.Connection, notification_id: int) -> NotificationRow | None:
    """One notification by id."""
    row = await conn.fetchrow(
        "SELECT id, recipient, run, slot, kind, message, details, created_at, deliver_at "
        "FROM notification WHERE id = $1",
        notification_id,
    )
    if row is None:
        return None
    return NotificationRow(
        id=row["id"],
        recipient=row["recipient"],
        run_id=str(row["run"]),
        slot_id=str(row["slot"]) if row["slot"] else None,
        kind=row["kind"],
        message=row["message"],
        details=row["details"],
        created_at=row["created_at"],
        deliver_at=row["deliver_at"],
    )
