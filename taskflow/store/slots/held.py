"""What a principal holds: the claimed slots of one holder (deactivation, reassignHeld)."""

from __future__ import annotations

from collections.abc import Collection

from taskflow.core.runs.model import SlotView
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs.runs import SLOT_COLUMNS, slot_from

#: The statements of ``slots/held.sql``, their column lists filled.
SQL = with_columns(sql.statements("slots/held"), slot_columns=SLOT_COLUMNS)


async def held_slots(
    conn: db.Connection, holder: str, workflows: Collection[str] | None = None
) -> list[SlotView]:
    """The slots ``holder`` holds (of ``workflows``; None: any), in id order, in one query."""
    rows = await conn.fetch(
        SQL["held_slots"],
        holder,
        sorted(workflows) if workflows is not None else None,
    )
    return [slot_from(r) for r in rows]


async def held_slots_by_run(conn: db.Connection, holder: str) -> dict[str, list[str]]:
    """The slots ``holder`` holds, by run, runs and slots in id order (the order to lock
    them in: each run, then its slots)."""
    rows = await conn.fetch(SQL["held_slots_by_run"], holder)
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(str(row["run"]), []).append(str(row["id"]))
    return found
