"""Magic-link and throttle rows <-> core views; the guarded consume statement."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.links import links as core
from taskflow.core.runs.model import SlotView
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs import runs

_COLUMNS = (
    "id, run, slot, event, recipient_name, recipient_email, created_by, created_at, expires_at, "
    "consumed_at, revoked_at, revoked_by, opens, opened_at"
)

#: Looked up when a token names no valid id, so every refusal costs one query alike.
NO_SUCH_LINK = uuid.UUID(int=0)


def _link(row: asyncpg.Record, prefix: str = "") -> core.LinkView:
    return db.record_as(core.LinkView, row, prefix, columns=db.REFERENCES)


def as_uuid(text: Any) -> uuid.UUID:
    """The link id a token carries, or :data:`NO_SUCH_LINK` when it is not a UUID."""
    try:
        return uuid.UUID(str(text))
    except ValueError:
        return NO_SUCH_LINK


async def insert(conn: db.Connection, link: core.LinkView, nonce_hash: str) -> None:
    await conn.execute(
        SQL["insert"],
        uuid.UUID(link.id),
        uuid.UUID(link.run_id),
        uuid.UUID(link.slot_id),
        link.event,
        nonce_hash,
        link.recipient_name,
        link.recipient_email,
        link.created_by,
        link.created_at,
        link.expires_at,
    )


async def get(conn: db.Connection, link_id: str) -> tuple[core.LinkView, str] | None:
    """A link and its nonce hash."""
    row = await conn.fetchrow(SQL["get"], as_uuid(link_id))
    return (_link(row), row["nonce_hash"]) if row else None


@dataclass(frozen=True)
class Target:
    """A link (with its nonce hash), its run and its slot, as one snapshot saw them."""

    link: tuple[core.LinkView, str] | None
    run: runs.RunRow | None
    slot: SlotView | None


_LINK_AS = ", ".join(f"l.{c.strip()} AS l_{c.strip()}" for c in _COLUMNS.split(","))
_SLOT_OF_C = ", ".join(f"c.{c.strip()}" for c in runs.SLOT_COLUMNS.split(","))

#: The statements of ``links/links.sql``, their column lists filled.
SQL = with_columns(
    sql.statements("links/links"),
    link_columns=_COLUMNS,
    link_as=_LINK_AS,
    run_columns_r=runs.run_columns("r_"),
    slot_columns_c=_SLOT_OF_C,
)


async def get_with_target(conn: db.Connection, link_id: str) -> Target:
    """A link, its run and its slot in ONE statement (one snapshot).

    Read separately, a concurrent submission could commit between the reads, and
    the link would look unspent while its slot looks done. An unknown id still
    probes the run and slot indexes (with the nil id), so every token costs the same.
    """
    row = await conn.fetchrow(
        SQL["get_with_target"],
        as_uuid(link_id),
        NO_SUCH_LINK,
    )
    assert row is not None
    return Target(
        (_link(row, "l_"), row["l_nonce_hash"]) if row["l_id"] is not None else None,
        runs.run_from(row, "r_") if row["r_id"] is not None else None,
        runs.slot_from(row) if row["id"] is not None else None,
    )


async def of_slot(conn: db.Connection, slot_id: str) -> list[core.LinkView]:
    rows = await conn.fetch(SQL["of_slot"], uuid.UUID(slot_id))
    return [_link(r) for r in rows]


async def _written(
    conn: db.Connection, statement: str, link_id: str, *args: Any
) -> core.LinkView | None:
    """The link as ``statement`` (on its id, then ``args``) left it; None: it wrote nothing."""
    row = await conn.fetchrow(statement, as_uuid(link_id), *args)
    return _link(row) if row else None


async def consume(
    conn: db.Connection, link_id: str, nonce_hash: str, now: datetime, opened_at: datetime
) -> core.LinkView | None:
    """Spend a usable link: one statement, so of racing submissions exactly one gets the row.

    A concurrent transaction that spent it first makes this one wait on the row
    lock, then re-check the WHERE clause and find nothing.
    """
    return await _written(conn, SQL["consume"], link_id, nonce_hash, now, opened_at)


async def count_open(
    conn: db.Connection, link_id: str, now: datetime, opened_at: datetime
) -> core.LinkView | None:
    """Count a submission that did not spend the link (e.g. a field was wrong)."""
    return await _written(conn, SQL["count_open"], link_id, now, opened_at)


async def revoke(conn: db.Connection, link_id: str, by: str, now: datetime) -> core.LinkView | None:
    """Revoke a link that is neither used nor revoked yet; None otherwise."""
    return await _written(conn, SQL["revoke"], link_id, now, by)


async def revoke_of_runs(
    conn: db.Connection, run_ids: Sequence[str], by: str, now: datetime
) -> int:
    """Revoke every unused, unrevoked link of these runs; how many were."""
    if not run_ids:
        return 0
    count = await conn.fetchval(SQL["revoke_of_runs"], [uuid.UUID(r) for r in run_ids], by, now)
    return int(count or 0)


# -- throttle ------------------------------------------------------------------------------------


async def throttle(conn: db.Connection, client: str) -> core.Throttle | None:
    row = await conn.fetchrow(SQL["throttle"], client)
    return core.Throttle(row[0], row[1], row[2]) if row else None


async def lock_throttle(conn: db.Connection, client: str, now: datetime) -> core.Throttle | None:
    """The client's row, locked (created empty first), so two API nodes count in turn."""
    await conn.execute(SQL["throttle_create"], client, now)
    row = await conn.fetchrow(SQL["throttle_lock"], client)
    assert row is not None
    return core.Throttle(row[0], row[1], row[2]) if row[1] else None


async def save_throttle(conn: db.Connection, client: str, state: core.Throttle) -> None:
    await conn.execute(
        SQL["throttle_save"],
        client,
        state.window_start,
        state.failures,
        state.blocked_until,
    )
