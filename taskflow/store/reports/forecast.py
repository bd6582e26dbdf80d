"""The breach forecast's peers: ended slots with a clock, and the live ones (``forecast.sql``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow.core.reports import forecast
from taskflow.store.common import db, sql

SQL = sql.statements("reports/forecast")


async def ended(
    conn: db.Connection, workflows: list[str] | None, since: datetime, until: datetime
) -> list[forecast.Peer]:
    """The slots with a clock opened in [since, until) that ended."""
    rows = await conn.fetch(SQL["ended"], workflows, since, until)
    return [
        forecast.Peer(
            key=(r["workflow"], r["state"], r["name"]),
            opened_at=r["opened_at"],
            due_at=r["due_at"],
            ended_at=r["ended_at"],
            breached=bool(r["breached"]),
        )
        for r in rows
    ]


async def live(conn: db.Connection, workflows: list[str] | None) -> dict[str, forecast.Peer]:
    """The live slots whose clock still counts, by slot id."""
    rows = await conn.fetch(SQL["live"], workflows)
    return {str(r["id"]): live_peer(r) for r in rows}


def live_peer(r: Mapping[str, Any]) -> forecast.Peer:
    """A live slot's row (workflow, state, name, opened_at, due_at) as a peer."""
    return forecast.Peer(
        key=(r["workflow"], r["state"], r["name"]),
        opened_at=r["opened_at"],
        due_at=r["due_at"],
        ended_at=None,
        breached=False,
    )
