"""Subjects: the tracked entities, as applications send them."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.common import refusals
from taskflow.store.common import db, sql

#: The statements of ``runs/subjects.sql``.
SQL = sql.statements("runs/subjects")


@dataclass(frozen=True)
class SubjectRow:
    id: str
    type: str
    external_id: str
    attributes: dict[str, Any]
    version: int
    #: When it was deleted (``deleteSubject``); None while it is tracked.
    gone_at: datetime | None = None


def from_row(row: asyncpg.Record, prefix: str = "") -> SubjectRow:
    """A subject from a row (its columns may carry a prefix, as in joins)."""
    return db.record_as(SubjectRow, row, prefix)


async def upsert(
    conn: db.Connection, type_: str, external_id: str, attributes: Mapping[str, Any], now: datetime
) -> tuple[SubjectRow, bool]:
    """Insert or replace a subject's attributes; (row, whether it was created)."""
    (found,) = await upsert_many(conn, [(type_, external_id, attributes)], now)
    if found is None:  # the subject was deleted: it takes no new run
        raise refusals.SubjectGone(
            f"The {type_} {external_id!r} was deleted (deleteSubject); no run starts for it."
        )
    return found


async def upsert_many(
    conn: db.Connection, sent: Sequence[tuple[str, str, Mapping[str, Any]]], now: datetime
) -> list[tuple[SubjectRow, bool] | None]:
    """:func:`upsert` for many (type, external id, attributes), no pair twice, in one
    statement: (row, whether it was created) in the order given, None for a deleted
    subject."""
    if not sent:
        return []
    found = await conn.fetch(
        SQL["upsert_many"],
        [uuid.uuid4() for _ in sent],
        [t for t, _, _ in sent],
        [e for _, e, _ in sent],
        [dict(a) for _, _, a in sent],
        now,
    )
    by_key = {(r["type"], r["external_id"]): (from_row(r), bool(r["created"])) for r in found}
    return [by_key.get((t, e)) for t, e, _ in sent]


async def insert_new(
    conn: db.Connection, type_: str, external_id: str, attributes: Mapping[str, Any], now: datetime
) -> SubjectRow | None:
    """Insert a new subject; None when it exists (it is then read with :func:`find`)."""
    row = await conn.fetchrow(
        SQL["insert_new"], uuid.uuid4(), type_, external_id, dict(attributes), now
    )
    return from_row(row) if row else None


#: A subject by type and external id (index ``subject_type_external_id_key``).
FIND = SQL["find"]


async def find(
    conn: db.Connection, type_: str, external_id: str, *, lock: bool = False
) -> SubjectRow | None:
    """A subject by its type and external id; ``lock`` takes its row lock (the subject comes
    before its runs in the lock order)."""
    row = await conn.fetchrow(
        SQL["find_locked"] if lock else SQL["find"],
        type_,
        external_id,
    )
    return from_row(row) if row else None


async def update(
    conn: db.Connection, subject_id: str, attributes: Mapping[str, Any], now: datetime
) -> SubjectRow:
    row = await conn.fetchrow(
        SQL["update"],
        uuid.UUID(subject_id),
        dict(attributes),
        now,
    )
    assert row is not None
    return from_row(row)


async def mark_gone(conn: db.Connection, subject_id: str, now: datetime) -> None:
    """Mark the (locked) subject deleted at ``now``; its row stays for its runs' history."""
    await conn.execute(SQL["mark_gone"], uuid.UUID(subject_id), now)
