"""Webhook endpoints, the event outbox and deliveries (statements in ``delivery/webhooks.sql``).

Events and their deliveries are written by the ``outbox_rows`` trigger on
``audit_event``, in the statement that writes the timeline lines: no use case
calls this module to emit an event. The worker takes due deliveries here
(``take_due``: FOR UPDATE SKIP LOCKED, the oldest pending one per run and endpoint)
and records what each attempt gave (``record``, ``endpoint_health``) in the same
transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow.core.delivery import webhook_events
from taskflow.store.common import db, sql

SQL = sql.statements("delivery/webhooks")


@dataclass(frozen=True)
class EndpointRow:
    """An endpoint as stored (its secrets included: only the service hands them out)."""

    id: str
    url: str
    description: str
    event_types: tuple[str, ...]
    workflows: tuple[str, ...]
    enabled: bool
    secret: str
    previous_secret: str | None
    previous_until: datetime | None
    created_by: str
    created_at: datetime
    updated_at: datetime
    failing_since: datetime | None
    disabled_at: datetime | None
    disabled_reason: str | None


def _endpoint(row: Mapping[str, Any]) -> EndpointRow:
    return db.record_as(EndpointRow, row)


async def insert_endpoint(
    conn: db.Connection,
    *,
    url: str,
    description: str,
    event_types: Sequence[str],
    workflows: Sequence[str],
    secret: str,
    created_by: str,
    now: datetime,
) -> str:
    """A new enabled endpoint; its id."""
    new_id = uuid.uuid4()
    await conn.execute(
        SQL["endpoint_insert"],
        new_id,
        url,
        description,
        list(event_types),
        list(workflows),
        secret,
        created_by,
        now,
    )
    return str(new_id)


async def get_endpoint(conn: db.Connection, endpoint_id: str) -> EndpointRow | None:
    """One endpoint (None for an id that is no uuid or names none)."""
    row = await sql.row_by_id(conn, SQL["endpoint_get"], endpoint_id)
    return _endpoint(row) if row is not None else None


async def endpoints(conn: db.Connection) -> list[EndpointRow]:
    """Every endpoint, oldest first (the service keeps those the caller may manage)."""
    rows = await conn.fetch(SQL["endpoints"])
    return [_endpoint(r) for r in rows]


async def disabled_endpoints(conn: db.Connection) -> list[EndpointRow]:
    """Endpoints disabled because they kept failing (needs attention)."""
    rows = await conn.fetch(SQL["endpoints_disabled"])
    return [_endpoint(r) for r in rows]


async def update_endpoint(
    conn: db.Connection, endpoint_id: str, change: webhook_events.EndpointChange, now: datetime
) -> None:
    """Set what ``change`` gives (its ``None`` parts stay unchanged)."""
    await conn.execute(
        SQL["endpoint_update"],
        uuid.UUID(endpoint_id),
        change.url,
        change.description,
        list(change.event_types) if change.event_types is not None else None,
        list(change.workflows) if change.workflows is not None else None,
        change.enabled,
        now,
    )


async def rotate_secret(
    conn: db.Connection, endpoint_id: str, secret: str, keep_until: datetime | None, now: datetime
) -> None:
    """Sign with ``secret`` from now on; the old one also signs until ``keep_until``."""
    await conn.execute(SQL["endpoint_rotate"], uuid.UUID(endpoint_id), secret, keep_until, now)


async def delete_endpoint(conn: db.Connection, endpoint_id: str) -> None:
    """Remove an endpoint and its deliveries."""
    await conn.execute(SQL["endpoint_delete"], uuid.UUID(endpoint_id))


# -- the worker's statements ---------------------------------------------------------------------


@dataclass(frozen=True)
class Due:
    """A delivery taken (locked): the event, where it goes, and how to sign it."""

    delivery: int
    attempts: int
    since: datetime
    endpoint: str
    #: Who owns the endpoint (its creator): deliveries go while they may receive them.
    owner: str
    url: str
    secret: str
    previous_secret: str | None
    previous_until: datetime | None
    #: The endpoint's failure record when the delivery was taken.
    failing_since: datetime | None
    event: webhook_events.Event


def _event(row: Mapping[str, Any]) -> webhook_events.Event:
    return db.record_as(
        webhook_events.Event, row, columns=db.REFERENCES, details=row["details"] or {}
    )


async def take_due(conn: db.Connection, now: datetime, limit: int) -> list[Due]:
    """Lock up to ``limit`` due deliveries for this transaction (SKIP LOCKED)."""
    rows = await conn.fetch(SQL["take_due"], now, limit)
    return [db.record_as(Due, r, event=_event(r)) for r in rows]


@dataclass(frozen=True)
class Outcome:
    """What one attempt gave."""

    delivery: int
    endpoint: str
    #: pending (tried again at ``next_at``) | delivered | dead | skipped (not tried)
    status: str
    next_at: datetime | None
    http_status: int | None
    error: str | None
    latency_ms: float


async def record(conn: db.Connection, outcomes: Sequence[Outcome], tried_at: datetime) -> None:
    """Write the outcomes of attempts on deliveries this transaction took (one statement)."""
    if not outcomes:
        return
    await conn.execute(
        SQL["record"],
        *db.columns(
            outcomes, "delivery", "status", "next_at", "http_status", "error", "latency_ms"
        ),
        tried_at,
    )


async def endpoint_health(
    conn: db.Connection,
    answered: Sequence[str],
    failing: Sequence[str],
    now: datetime,
    disable_after: timedelta,
) -> list[str]:
    """Clear or start endpoints' failure records; the URLs of endpoints disabled now."""
    if not failing and not answered:
        return []
    rows = await conn.fetch(
        SQL["endpoint_health"],
        [uuid.UUID(e) for e in set(answered)],
        [uuid.UUID(e) for e in set(failing)],
        now,
        disable_after,
    )
    return [str(r["url"]) for r in rows if not r["enabled"]]


async def next_due(conn: db.Connection) -> datetime | None:
    """The nearest next try of any pending delivery."""
    value: datetime | None = await conn.fetchval(SQL["next_due"])
    return value


# -- the delivery log and replays ----------------------------------------------------------------


@dataclass(frozen=True)
class LogRow:
    """One delivery as the log shows it."""

    id: int
    event: int
    event_type: str
    run_id: str
    occurred_at: datetime
    status: str
    attempts: int
    next_at: datetime
    last_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    last_latency_ms: float | None
    delivered_at: datetime | None
    created_at: datetime


async def log(
    conn: db.Connection, endpoint_id: str, *, status: str | None, before: int | None, limit: int
) -> tuple[list[LogRow], int]:
    """A page of an endpoint's deliveries, newest first, and how many match."""
    key = uuid.UUID(endpoint_id)
    rows = await conn.fetch(SQL["log"], key, status, before or 2**62, limit)
    total = await conn.fetchval(SQL["log_count"], key, status)
    found = [db.record_as(LogRow, r, columns={"event_type": "type", "run_id": "run"}) for r in rows]
    return found, int(total)


async def replay(
    conn: db.Connection,
    endpoint_id: str,
    *,
    delivery: int | None,
    start: datetime | None,
    end: datetime | None,
    now: datetime,
) -> int:
    """Make deliveries pending again, due ``now``; how many."""
    rows = await conn.fetch(SQL["replay"], uuid.UUID(endpoint_id), delivery, start, end, now)
    return len(rows)
