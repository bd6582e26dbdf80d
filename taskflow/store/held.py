"""What a principal holds: the claimed slots of one holder (deactivation, reassignHeld)."""

from __future__ import annotations

from collections.abc import Collection

from taskflow.core.runs.model import SlotView
from taskflow.store import db
from taskflow.store.runs import SLOT_COLUMNS, slot_from


async def held_slots(
    conn: db.Connection, holder: str, workflows: Collection[str] | None = None
) -> list[SlotView]:
    """The slots ``holder`` holds (of ``workflows``; None: any), in id order, in one query."""
    rows = await conn.fetch(
        f"SELECT {SLOT_COLUMNS} FROM slot WHERE holder = $1 AND status = 'claimed' "
        "AND ($2::text[] IS NULL OR workflow = ANY($2::text[])) ORDER BY id",
        holder,
        sorted(workflows) if workflows is not None else None,
    )
    return [slot_from(r) for r in rows]


async def held_slots_by_run(conn: db.Connection, holder: str) -> dict[str, list[str]]:
    """The slots ``holder`` holds, by run, runs and slots in id order (the order to lock
    them in: each run, then its slots)."""
    rows = await conn.fetch(
        "SELECT run, id FROM slot WHERE holder = $1 AND status = 'claimed' ORDER BY run, id",
        holder,
    )
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(str(row["run"]), []).append(str(row["id"]))
    return found
