"""The statements behind ``/metrics``: each bounded by an index, none a full scan.

Two kinds (``service/metrics.py`` says which gauge uses which):

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

from taskflow.core import durations
from taskflow.store import calendar_days, db, risk_sql
from taskflow.store.business_sql import epoch_us

#: The statuses of a slot still waiting for work.
LIVE = ("pending", "open", "claimed")
_LIVE_SQL = "('pending', 'open', 'claimed')"
_DUE_US = epoch_us("k.due_at")
#: Due instants this far ahead read their day rows; later ones, the exact lookup.
_AHEAD = "interval '35 days'"


async def live_slots(conn: db.Connection) -> list[tuple[str, str, str, int]]:
    """(workflow, state, status, count) of every live slot."""
    rows = await conn.fetch(
        f"""SELECT workflow, state, status, count(*) AS n FROM slot
        WHERE status IN {_LIVE_SQL} GROUP BY workflow, state, status"""
    )
    return [(r["workflow"], r["state"], r["status"], int(r["n"])) for r in rows]


async def clocks(
    conn: db.Connection, *, now: datetime, day_us: dict[str, int], at_risk_left: float
) -> list[tuple[str, str, int, int]]:
    """(workflow, milestone, at risk, breached) over the clocks of live slots.

    At risk as ``store/at_risk.py`` counts it (running, at most ``at_risk_left`` of the
    budget left); breached: not met and due (or recorded breached) by ``now``.
    """
    left = risk_sql.business_left("xd", "k.calendar", "k.due_at", _DUE_US, "$5::bigint")
    rows = await conn.fetch(
        f"""WITH
        {calendar_days.ctes("$2::text[]", "$1::timestamptz", f"$1::timestamptz + {_AHEAD}")},
        cal_now AS ({risk_sql.cal_now("$2::text[]", "$3::bigint[]", "$1::timestamptz")})
        SELECT sl.workflow, k.milestone,
            count(*) FILTER (
                WHERE {risk_sql.running("k.met_at", "k.due_at", "$1", "k.pauses")}
                  AND {risk_sql.within_share("x.left_us", "k.budget_us", "k.working_days", "$4")}
            ) AS at_risk,
            count(*) FILTER (
                WHERE k.met_at IS NULL AND (k.due_at <= $1 OR k.breached_at <= $1) IS TRUE
            ) AS breached
        FROM slot sl
        JOIN sla_clock k ON k.slot = sl.id
        LEFT JOIN cal_now nw ON nw.calendar = k.calendar
        LEFT JOIN cal_day xd ON xd.calendar = k.calendar
            AND xd.day_no = {_DUE_US} / {calendar_days.DAY_US}
        CROSS JOIN LATERAL (SELECT {left} AS left_us) x
        WHERE sl.status IN {_LIVE_SQL}
        GROUP BY sl.workflow, k.milestone""",
        now,
        list(day_us),
        list(day_us.values()),
        at_risk_left,
        durations.epoch_us(now),
    )
    return [(r["workflow"], r["milestone"], int(r["at_risk"]), int(r["breached"])) for r in rows]


async def oldest_open(conn: db.Connection) -> datetime | None:
    """When the open slot that opened first opened (None: no slot is open)."""
    found: datetime | None = await conn.fetchval(
        "SELECT opened_at FROM slot WHERE status = 'open' AND opened_at IS NOT NULL "
        "ORDER BY opened_at LIMIT 1"
    )
    return found


async def timers(
    conn: db.Connection, *, now: datetime, overdue_before: datetime
) -> tuple[int, int, int]:
    """(armed and due by ``now``, of those due before ``overdue_before``, dead)."""
    row = await conn.fetchrow(
        """SELECT
            (SELECT count(*) FROM timer WHERE status = 'armed' AND due_at <= $1) AS due,
            (SELECT count(*) FROM timer WHERE status = 'armed' AND due_at < $2) AS overdue,
            (SELECT count(*) FROM timer WHERE status = 'dead') AS dead""",
        now,
        overdue_before,
    )
    assert row is not None
    return int(row["due"]), int(row["overdue"]), int(row["dead"])


async def read_snapshot(conn: db.Connection, name: str) -> tuple[datetime, Any] | None:
    """The snapshot ``name``: (when it was taken, its body), or None before the first."""
    row = await conn.fetchrow("SELECT taken_at, body FROM metric_snapshot WHERE name = $1", name)
    return None if row is None else (row["taken_at"], row["body"])


async def write_snapshot(conn: db.Connection, name: str, taken_at: datetime, body: Any) -> None:
    """Replace the snapshot ``name``."""
    await conn.execute(
        """INSERT INTO metric_snapshot (name, taken_at, body) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET taken_at = EXCLUDED.taken_at, body = EXCLUDED.body""",
        name,
        taken_at,
        body,
    )
