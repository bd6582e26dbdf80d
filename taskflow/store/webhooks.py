"""Webhook endpoints, the event outbox and deliveries (statements in ``sql/webhooks.sql``).

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

from taskflow.core import webhook_events
from taskflow.store import db, sql

SQL = sql.statements("webhooks")


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
    values = dict(row)
    values["id"] = str(values["id"])
    values["event_types"] = tuple(values["event_types"])
    values["workflows"] = tuple(values["workflows"])
    return EndpointRow(**values)


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
    try:
        key = uuid.UUID(endpoint_id)
    except ValueError:
        return None
    row = await conn.fetchrow(SQL["endpoint_get"], key)
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
    conn: db.Connection,
    endpoint_id: str,
    *,
    url: str | None,
    description: str | None,
    event_types: Sequence[str] | None,
    workflows: Sequence[str] | None,
    enabled: bool | None,
    now: datetime,
) -> None:
    """Change what is given (None: unchanged)."""
    await conn.execute(
        SQL["endpoint_update"],
        uuid.UUID(endpoint_id),
        url,
        description,
        list(event_types) if event_types is not None else None,
        list(workflows) if workflows is not None else None,
        enabled,
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
    url: str
    secret: str
    previous_secret: str | None
    previous_until: datetime | None
    #: The endpoint's failure record when the delivery was taken.
    failing_since: datetime | None
    event: webhook_events.Event


def _event(row: Mapping[str, Any]) -> webhook_events.Event:
    return webhook_events.Event(
        id=int(row["id"]),
        type=row["type"],
        kind=row["kind"],
        run_id=str(row["run"]),
        slot_id=str(row["slot"]) if row["slot"] is not None else None,
        slot_name=row["slot_name"],
        workflow=row["workflow"],
        workflow_version=int(row["workflow_version"]),
        subject_type=row["subject_type"],
        subject_external_id=row["subject_external_id"],
        actor=row["actor"],
        reason=row["reason"],
        details=row["details"] or {},
        occurred_at=row["occurred_at"],
    )


async def take_due(conn: db.Connection, now: datetime, limit: int) -> list[Due]:
    """Lock up to ``limit`` due deliveries for this transaction (SKIP LOCKED)."""
    rows = await conn.fetch(SQL["take_due"], now, limit)
    return [
        Due(
            delivery=int(r["delivery"]),
            attempts=int(r["attempts"]),
            since=r["since"],
            endpoint=str(r["endpoint"]),
            url=r["url"],
            secret=r["secret"],
            previous_secret=r["previous_secret"],
            previous_until=r["previous_until"],
            failing_since=r["failing_since"],
            event=_event(r),
        )
        for r in rows
    ]


@dataclass(frozen=True)
class Outcome:
    """What one attempt gave."""

    delivery: int
    endpoint: str
    #: pending (tried again at ``next_at``) | delivered | dead
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
        [o.delivery for o in outcomes],
        [o.status for o in outcomes],
        [o.next_at for o in outcomes],
        [o.http_status for o in outcomes],
        [o.error for o in outcomes],
        [o.latency_ms for o in outcomes],
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
    found = [
        LogRow(
            id=int(r["id"]),
            event=int(r["event"]),
            event_type=r["type"],
            run_id=str(r["run"]),
            occurred_at=r["occurred_at"],
            status=r["status"],
            attempts=int(r["attempts"]),
            next_at=r["next_at"],
            last_attempt_at=r["last_attempt_at"],
            last_status=r["last_status"],
            last_error=r["last_error"],
            last_latency_ms=r["last_latency_ms"],
            delivered_at=r["delivered_at"],
            created_at=r["created_at"],
        )
        for r in rows
    ]
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
