"""The statements that carry load: guarded slot writes, claim-next, inbox, work, board, timeline.

Slot writes are single guarded statements: the WHERE clause repeats the status
and version the decision was made on, so of two concurrent claimers exactly one
row is updated and the other gets nothing back (and is told why on a re-read).
Claim-next takes the most urgent open slot with ``FOR UPDATE SKIP LOCKED`` so
concurrent claimers never wait on, or get, the same row.

Urgency is ``due_at`` (nearest SLA due instant; nulls last), then ``priority``
(1 first), then ``id``; lists page by keyset on exactly that order.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core import access
from taskflow.core.runs.filters import SlotFilter
from taskflow.core.runs.model import SlotView
from taskflow.store import candidacy, db
from taskflow.store import deadlines as deadline_rows
from taskflow.store.runs import SLOT_COLUMNS, run_columns, slot_from

_RUN_PREFIX = "run_"
_SLOT_OF_C = ", ".join(f"c.{name.strip()}" for name in SLOT_COLUMNS.split(","))


def with_context(source: str) -> str:
    """Select the slot row written by CTE ``source`` with its run, clocks and timers."""
    return f"""
        SELECT {_SLOT_OF_C}, {run_columns(_RUN_PREFIX)}, {deadline_rows.CONTEXT_COLUMNS}
        FROM {source} c JOIN run r ON r.id = c.run JOIN subject s ON s.id = r.subject
    """


def context_of(row: asyncpg.Record | None) -> deadline_rows.SlotContext | None:
    return deadline_rows.slot_context(row, _RUN_PREFIX) if row is not None else None


async def write_slot_move(
    conn: db.Connection, before: SlotView, after: SlotView, now: datetime
) -> deadline_rows.SlotContext | None:
    """Apply a claim/release/assign decided on ``before``; None when the slot moved meanwhile.

    The written slot comes back with its run, clocks and timers (one round trip).
    """
    row = await conn.fetchrow(
        f"""
        WITH moved AS (
            UPDATE slot SET status = $4, holder = $5, claimed_at = $6, version = $7,
                            updated_at = $8, picked_at = $9, held_us = $10, held_since = $11
            WHERE id = $1 AND status = $2 AND version = $3
            RETURNING *
        )
        {with_context("moved")}
        """,
        uuid.UUID(before.id),
        before.status,
        before.version,
        after.status,
        after.holder,
        after.claimed_at,
        after.version,
        now,
        after.picked_at,
        after.held_us,
        after.held_since,
    )
    return context_of(row)


def filter_sql(f: SlotFilter, args: list[Any]) -> str:
    """SQL conditions for ``f`` on alias ``sl``, appending their parameters to ``args``."""
    parts = []

    param = functools.partial(db.placeholder, args)

    if f.workflow is not None:
        parts.append(f"sl.workflow = {param(f.workflow)}")
    if f.state is not None:
        parts.append(f"sl.state = {param(f.state)}")
    if f.name is not None:
        parts.append(f"sl.name = {param(f.name)}")
    if f.priority_at_most is not None:
        parts.append(f"sl.priority <= {param(f.priority_at_most)}")
    if f.due_before is not None:
        parts.append(f"sl.due_at < {param(f.due_before)}")
    if f.holder is not None:
        parts.append(f"sl.holder = {param(f.holder)}")
    if f.audience:
        parts.append(f"sl.audience && {param(list(f.audience))}::text[]")
    if f.status:
        parts.append(f"sl.status = ANY({param(list(f.status))}::text[])")
    return "".join(f" AND {p}" for p in parts) + scope_sql(f.scope, args)


def scope_sql(scope: access.Scope, args: list[Any], alias: str = "sl") -> str:
    """`` AND (...)``: slots (alias ``alias``) where a scope of powers reaches; "" everywhere."""
    if scope is None:
        return ""
    if not scope:
        return " AND false"
    param = functools.partial(db.placeholder, args)
    reaches = []
    for reach in scope:
        conditions = ["true"]
        if reach.workflows is not None:
            conditions.append(
                f"{alias}.workflow = ANY({param(sorted(reach.workflows), '::text[]')})"
            )
        if reach.teams is not None:
            conditions.append(f"{alias}.audience && {param(sorted(reach.teams), '::text[]')}")
        reaches.append(" AND ".join(conditions))
    return " AND (" + " OR ".join(f"({r})" for r in reaches) + ")"


def _keyset_sql(cursor: tuple[datetime | None, int, str] | None, args: list[Any]) -> str:
    """Rows strictly after ``cursor`` in (due_at nulls last, priority, id) order."""
    if cursor is None:
        return ""
    due, priority, slot_id = cursor
    args += [priority, uuid.UUID(slot_id)]
    p, i = f"${len(args) - 1}", f"${len(args)}"
    if due is None:
        return f" AND sl.due_at IS NULL AND (sl.priority, sl.id) > ({p}, {i})"
    args.append(due)
    d = f"${len(args)}"
    return (
        f" AND (sl.due_at > {d} OR sl.due_at IS NULL"
        f" OR (sl.due_at = {d} AND (sl.priority, sl.id) > ({p}, {i})))"
    )


ROW_COLUMNS = (
    ", ".join(f"sl.{c.strip()}" for c in SLOT_COLUMNS.split(","))
    + """,
    r.state AS run_state, r.status AS run_status, r.definition_version,
    sub.type AS subject_type, sub.external_id AS subject_external_id,
    sub.attributes AS subject_attributes
"""
)


URGENCY = "sl.due_at ASC NULLS LAST, sl.priority, sl.id"


def _urgent_page(where: str, limit: int) -> str:
    """The most urgent ``limit`` slots matching ``where``, with their runs and subjects.

    Slots are sorted and cut first, and only the kept rows are joined: the planner
    underestimates audience filters (``audience && keys``) and would otherwise join
    every candidate row before sorting (bench/README.md, "Inbox and claims").
    """
    return f"""
        SELECT {ROW_COLUMNS}
        FROM (SELECT sl.* FROM slot sl WHERE {where} ORDER BY {URGENCY} LIMIT {int(limit)}) sl
        JOIN run r ON r.id = sl.run JOIN subject sub ON sub.id = r.subject
        ORDER BY {URGENCY}
    """


@dataclass(frozen=True)
class SlotRow:
    """A slot with what a list row shows beside it (its run's state and its subject)."""

    slot: SlotView
    due_at: datetime | None
    workflow: str
    definition_version: int
    run_state: str
    run_status: str
    subject_type: str
    subject_external_id: str
    subject_attributes: dict[str, Any]

    @property
    def cursor(self) -> tuple[datetime | None, int, str]:
        return (self.due_at, self.slot.priority, self.slot.id)


def _slot_row(row: asyncpg.Record) -> SlotRow:
    return SlotRow(
        slot=slot_from(row),
        due_at=row["due_at"],
        workflow=row["workflow"],
        definition_version=row["definition_version"],
        run_state=row["run_state"],
        run_status=row["run_status"],
        subject_type=row["subject_type"],
        subject_external_id=row["subject_external_id"],
        subject_attributes=row["subject_attributes"],
    )


async def inbox(
    conn: db.Connection,
    *,
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    after: tuple[datetime | None, int, str] | None,
    limit: int,
) -> list[SlotRow]:
    """Slots the principal can act on now: held by them, or open and their whole candidate
    rule admits them (``candidacy.admits_sql``)."""
    args: list[Any] = [principal_id, list(keys)]
    sql = _urgent_page(_inbox_where(f, args) + _keyset_sql(after, args), limit)
    return [_slot_row(r) for r in await conn.fetch(sql, *args)]


def _inbox_where(f: SlotFilter, args: list[Any]) -> str:
    """The inbox's condition for principal $1 with keys $2 (already in ``args``)."""
    return f"""sl.status IN ('open', 'claimed')
        AND ((sl.status = 'claimed' AND sl.holder = $1)
             OR (sl.status = 'open' AND {candidacy.admits_sql("sl", "$2::text[]")}))
        {filter_sql(f, args)}"""


async def inbox_count(
    conn: db.Connection, *, principal_id: str, keys: Sequence[str], f: SlotFilter
) -> int:
    """How many rows :func:`inbox` lists across all its pages."""
    args: list[Any] = [principal_id, list(keys)]
    where = _inbox_where(f, args)
    return int(await conn.fetchval(f"SELECT count(*) FROM slot sl WHERE {where}", *args))


async def work(
    conn: db.Connection,
    *,
    f: SlotFilter,
    after: tuple[datetime | None, int, str] | None,
    limit: int,
    viewer: tuple[str, Sequence[str]] | None = None,
) -> tuple[list[SlotRow], int]:
    """Every live slot matching ``f`` whoever holds it, and how many match in all.

    With ``viewer`` (principal id, keys): only the slots they hold or whose whole
    candidate rule admits them (a team member reading their team's queue).
    """
    args: list[Any] = []
    where = "sl.status IN ('pending', 'open', 'claimed')"
    if viewer is not None:
        args += [viewer[0], list(viewer[1])]
        where += f" AND (sl.holder = $1 OR {candidacy.admits_sql('sl', '$2::text[]')})"
    where += filter_sql(f, args)
    total = await conn.fetchval(f"SELECT count(*) FROM slot sl WHERE {where}", *args)
    page_args = list(args)
    sql = _urgent_page(where + _keyset_sql(after, page_args), limit)
    rows = await conn.fetch(sql, *page_args)
    return [_slot_row(r) for r in rows], int(total)


@dataclass(frozen=True)
class TimelineRow:
    id: int
    slot_id: str | None
    kind: str
    actor: str | None
    reason: str | None
    details: dict[str, Any]
    at: datetime


async def timeline(
    conn: db.Connection, run_id: str, *, kinds: Sequence[str] | None, after_id: int, limit: int
) -> tuple[list[TimelineRow], int]:
    """A run's timeline in order, and its total length for these kinds."""
    key = uuid.UUID(run_id)
    kind_list = list(kinds) if kinds else None
    total = await conn.fetchval(
        "SELECT count(*) FROM audit_event "
        "WHERE run = $1 AND ($2::text[] IS NULL OR kind = ANY($2))",
        key,
        kind_list,
    )
    rows = await conn.fetch(
        """
        SELECT id, slot, kind, actor, reason, details, at FROM audit_event
        WHERE run = $1 AND ($2::text[] IS NULL OR kind = ANY($2)) AND id > $3
        ORDER BY id LIMIT $4
        """,
        key,
        kind_list,
        after_id,
        limit,
    )
    return [
        TimelineRow(
            id=r["id"],
            slot_id=str(r["slot"]) if r["slot"] else None,
            kind=r["kind"],
            actor=r["actor"],
            reason=r["reason"],
            details=r["details"],
            at=r["at"],
        )
        for r in rows
    ], int(total)


async def board_runs(
    conn: db.Connection,
    *,
    workflow: str,
    principal_id: str | None,
    keys: Sequence[str],
    after: tuple[datetime, str] | None,
    limit: int,
    include_ended: bool,
) -> tuple[list[asyncpg.Record], int]:
    """Runs of a workflow for a board (``principal_id`` None: every run, for leads).

    A non-lead sees the runs where they hold a live slot, or whose whole candidate (or
    delegate) rule admits them.
    """
    from taskflow.store.runs import RUN_COLUMNS

    args: list[Any] = [workflow, include_ended]
    where = "r.workflow = $1 AND ($2 OR r.status = 'active')"
    if principal_id is not None:
        args += [principal_id, list(keys)]
        where += f""" AND EXISTS (
            SELECT 1 FROM slot x WHERE x.run = r.id AND x.status IN ('pending', 'open', 'claimed')
              AND (x.holder = $3 OR {candidacy.admits_sql("x", "$4::text[]")}
                   OR {candidacy.admits_sql("x", "$4::text[]", column="delegates")}))"""
    total = await conn.fetchval(f"SELECT count(*) FROM run r WHERE {where}", *args)
    if after is not None:
        args += [after[0], uuid.UUID(after[1])]
        where += f" AND (r.started_at, r.id) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(
        f"SELECT {RUN_COLUMNS} FROM run r JOIN subject s ON s.id = r.subject WHERE {where} "
        f"ORDER BY r.started_at, r.id LIMIT {int(limit)}",
        *args,
    )
    return list(rows), int(total)


async def live_slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> list[SlotView]:
    """The live slots of many runs in one query (board cards)."""
    rows = await conn.fetch(
        f"SELECT {SLOT_COLUMNS} FROM slot WHERE run = ANY($1::uuid[]) "
        "AND status IN ('pending', 'open', 'claimed') ORDER BY run, name, item_index, id",
        [uuid.UUID(r) for r in run_ids],
    )
    return [slot_from(r) for r in rows]
