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

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.access import access
from taskflow.core.runs.model import SlotView
from taskflow.core.slots.filters import SlotFilter
from taskflow.store.clocks import deadlines as deadline_rows
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import Statement, with_columns
from taskflow.store.runs.runs import RUN_COLUMNS, SLOT_COLUMNS, run_columns, slot_from

_RUN_PREFIX = "run_"

#: The column lists of a slot written by a CTE (alias ``c``) with its run (prefixed
#: ``run_``), clocks and timers: the markers of statements answering a
#: :class:`deadlines.SlotContext` (:func:`context_of`), filled at import.
CONTEXT = {
    "slot_of_c": ", ".join(f"c.{name.strip()}" for name in SLOT_COLUMNS.split(",")),
    "context_run_columns": run_columns(_RUN_PREFIX),
    "context_columns": deadline_rows.CONTEXT_COLUMNS,
}


def context_of(row: asyncpg.Record | None) -> deadline_rows.SlotContext | None:
    return deadline_rows.slot_context(row, _RUN_PREFIX) if row is not None else None


async def write_slot_move(
    conn: db.Connection, before: SlotView, after: SlotView, now: datetime
) -> deadline_rows.SlotContext | None:
    """Apply a claim/release/assign decided on ``before``; None when the slot moved meanwhile.

    The written slot comes back with its run, clocks and timers (one round trip).
    """
    row = await conn.fetchrow(
        SQL["slot_move"],
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


def slot_filters(st: Statement, f: SlotFilter) -> Statement:
    """Add the conditions of ``f`` (on alias ``sl``) to ``st``."""
    st.where_given(
        ("slot_workflow", f.workflow),
        ("slot_state", f.state),
        ("slot_name", f.name),
        ("slot_priority_at_most", f.priority_at_most),
        ("slot_due_before", f.due_before),
        ("slot_holder", f.holder),
    )
    if f.audience:
        st.where("slot_audience_any", list(f.audience))
    if f.status:
        st.where("slot_status_in", list(f.status))
    return scope(st, f.scope)


def scope(st: Statement, reach: access.Scope) -> Statement:
    """Add ``(...)``: slots (alias ``sl``) where a scope of powers reaches (nothing when
    everywhere, false when nowhere)."""
    if reach is None:
        return st
    groups = []
    for one in reach:
        group: list[tuple[str, tuple[Any, ...]]] = []
        if one.workflows is not None:
            group.append(("slot_workflow_in", (sorted(one.workflows),)))
        if one.teams is not None:
            group.append(("slot_audience_any", (sorted(one.teams),)))
        groups.append(group)
    return st.where_any(groups)


def scope_sql(reach: access.Scope, args: list[Any]) -> str:
    """`` AND (...)``: slots (alias ``sl``) where a scope of powers reaches; "" everywhere."""
    return scope(Statement.over(args), reach).conditions()


def _after(st: Statement, cursor: tuple[datetime | None, int, str] | None) -> Statement:
    """Rows strictly after ``cursor`` in (due_at nulls last, priority, id) order."""
    if cursor is None:
        return st
    due, priority, slot_id = cursor
    if due is None:
        return st.where("slot_after_in_urgency_undue", priority, uuid.UUID(slot_id))
    return st.where("slot_after_in_urgency", due, due, priority, uuid.UUID(slot_id))


ROW_COLUMNS = (
    ", ".join(f"sl.{c.strip()}" for c in SLOT_COLUMNS.split(","))
    + """,
    r.state AS run_state, r.status AS run_status, r.definition_version,
    sub.type AS subject_type, sub.external_id AS subject_external_id,
    sub.attributes AS subject_attributes
"""
)


URGENCY = "sl.due_at ASC NULLS LAST, sl.priority, sl.id"

#: The statements of ``slots/queries.sql``, their column lists filled.
SQL = with_columns(
    sql.statements("slots/queries"),
    row_columns=ROW_COLUMNS,
    slot_columns=SLOT_COLUMNS,
    run_columns=RUN_COLUMNS,
    **CONTEXT,
)


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
    return db.record_as(SlotRow, row, slot=slot_from(row))


async def inbox(
    conn: db.Connection,
    *,
    principal_id: str,
    keys: Sequence[str],
    f: SlotFilter,
    after: tuple[datetime | None, int, str] | None,
    limit: int,
    caller_digest: str | None = None,
) -> list[SlotRow]:
    """Slots the principal can act on now: held by them, or open and their whole candidate
    rule admits them (``candidacy.admits_sql``). With ``caller_digest``
    (``principals.get_checked``'s) no row unless the principal's row is still the one read
    with that digest (the caller checked in the page's own round trip)."""
    st = _after(slot_filters(Statement(SQL["inbox_page"], principal_id, list(keys)), f), after)
    if caller_digest is not None:
        st.where("caller_unchanged", principal_id, caller_digest)
    text, args = st.build(limit=limit)
    return [_slot_row(r) for r in await conn.fetch(text, *args)]


async def inbox_count(
    conn: db.Connection, *, principal_id: str, keys: Sequence[str], f: SlotFilter
) -> int:
    """How many rows :func:`inbox` lists across all its pages."""
    text, args = slot_filters(Statement(SQL["inbox_count"], principal_id, list(keys)), f).build()
    return int(await conn.fetchval(text, *args))


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
    if viewer is None:
        count = slot_filters(Statement(SQL["work_count"]), f)
        page = SQL["work_page"]
    else:
        count = slot_filters(Statement(SQL["team_count"], viewer[0], list(viewer[1])), f)
        page = SQL["team_page"]
    total = await conn.fetchval(*_flat(count.build()))
    text, args = _after(count.copy(page), after).build(limit=limit)
    rows = await conn.fetch(text, *args)
    return [_slot_row(r) for r in rows], int(total)


def _flat(built: tuple[str, list[Any]]) -> list[Any]:
    return [built[0], *built[1]]


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
    total = await conn.fetchval(SQL["timeline_count"], key, kind_list)
    rows = await conn.fetch(SQL["timeline_page"], key, kind_list, after_id, limit)
    return [db.record_as(TimelineRow, r, columns=db.REFERENCES) for r in rows], int(total)


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
    if principal_id is None:
        count = Statement(SQL["board_count"], workflow, include_ended)
        page = SQL["board_page"]
    else:
        fixed = (workflow, include_ended, principal_id, list(keys))
        count = Statement(SQL["board_count_for"], *fixed)
        page = SQL["board_page_for"]
    total = await conn.fetchval(*_flat(count.build()))
    st = count.copy(page)
    if after is not None:
        st.where("run_after_in_start", after[0], uuid.UUID(after[1]))
    text, args = st.build(limit=limit)
    rows = await conn.fetch(text, *args)
    return list(rows), int(total)


async def live_slots_of_runs(conn: db.Connection, run_ids: Sequence[str]) -> list[SlotView]:
    """The live slots of many runs in one query (board cards)."""
    rows = await conn.fetch(SQL["live_slots_of_runs"], [uuid.UUID(r) for r in run_ids])
    return [slot_from(r) for r in rows]
