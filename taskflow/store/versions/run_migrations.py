"""Rows a run migration changes beside the engine's writes, and what start-up counts.

Statements live in ``versions/run_migrations.sql``; see ``service/versions/run_migrations.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql

SQL = sql.statements("versions/run_migrations")


@dataclass(frozen=True)
class Renamed:
    """A kept slot's new place: the state it is in and its name there."""

    slot_id: str
    state: str
    name: str
    waits_for: str


async def rename_slots(conn: db.Connection, renamed: Sequence[Renamed], now: datetime) -> None:
    """Put kept slots under their new state and names (their run's row is locked)."""
    if not renamed:
        return
    await conn.execute(
        SQL["rename_slots"],
        [uuid.UUID(r.slot_id) for r in renamed],
        [r.state for r in renamed],
        [r.name for r in renamed],
        [r.waits_for for r in renamed],
        now,
    )


async def rename_buffered(conn: db.Connection, run_id: str, names: Mapping[str, str]) -> None:
    """Events ``run_id`` keeps for a slot named ``old`` now wait for the slot named ``new``."""
    if not names:
        return
    await conn.execute(SQL["rename_buffered"], uuid.UUID(run_id), list(names), list(names.values()))


async def live_states(conn: db.Connection) -> dict[tuple[str, int, str], int]:
    """Live runs by (workflow, version, state)."""
    rows = await conn.fetch(SQL["live_states"])
    return {(r["workflow"], r["definition_version"], r["state"]): r["n"] for r in rows}
