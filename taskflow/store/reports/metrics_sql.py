"""The statements behind ``/metrics``: each bounded by an index, none a full scan.

Two kinds (``service/reports/metrics.py`` says which gauge uses which):

- read at scrape time, one index probe or range each: armed timers due now
  (``timer_armed_due``), dead timers (``timer_dead``), the oldest open slot
  (``slot_open_opened_at``), and the worker's snapshot row;
- computed by a worker every few seconds into ``metric_snapshot``: live slots by
  workflow, state and status, and their clocks at risk and breached. Those read
  every live slot (an index range over ``status IN (...)``, never the ended
  ones), which is cheap for a worker every 15 s and too dear for every scrape.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from taskflow.core.common import durations
from taskflow.store.clocks import risk_sql
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns

#: The statements of ``reports/metrics_sql.sql``, the shared pieces filled in.
SQL = with_columns(
    sql.statements("reports/metrics_sql"),
    **risk_sql.AT_RISK_MARKERS,
)


async def live_slots(conn: db.Connection) -> list[tuple[str, str, str, int]]:
    """(workflow, state, status, count) of every live slot."""
    rows = await conn.fetch(SQL["live_slots"])
    return [(r["workflow"], r["state"], r["status"], int(r["n"])) for r in rows]


async def clocks(
    conn: db.Connection, *, now: datetime, day_us: dict[str, int], at_risk_left: float
) -> list[tuple[str, str, int, int]]:
    """(workflow, milestone, at risk, breached) over the clocks of live slots.

    At risk as ``store/reports/at_risk.py`` counts it (running, at most ``at_risk_left`` of the
    budget left); breached: not met and due (or recorded breached) by ``now``.
    """
    rows = await conn.fetch(
        SQL["clocks"],
        now,
        list(day_us),
        list(day_us.values()),
        at_risk_left,
        durations.epoch_us(now),
    )
    return [(r["workflow"], r["milestone"], int(r["at_risk"]), int(r["breached"])) for r in rows]


async def oldest_open(conn: db.Connection) -> datetime | None:
    """When the open slot that opened first opened (None: no slot is open)."""
    found: datetime | None = await conn.fetchval(SQL["oldest_open"])
    return found


async def timers(
    conn: db.Connection, *, now: datetime, overdue_before: datetime
) -> tuple[int, int, int]:
    """(armed and due by ``now``, of those due before ``overdue_before``, dead)."""
    row = await conn.fetchrow(
        SQL["timers"],
        now,
        overdue_before,
    )
    assert row is not None
    return int(row["due"]), int(row["overdue"]), int(row["dead"])


async def read_snapshot(conn: db.Connection, name: str) -> tuple[datetime, Any] | None:
    """The snapshot ``name``: (when it was taken, its body), or None before the first."""
    row = await conn.fetchrow(SQL["read_snapshot"], name)
    return None if row is None else (row["taken_at"], row["body"])


async def write_snapshot(conn: db.Connection, name: str, taken_at: datetime, body: Any) -> None:
    """Replace the snapshot ``name``."""
    await conn.execute(
        SQL["write_snapshot"],
        name,
        taken_at,
        body,
    )
