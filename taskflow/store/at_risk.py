"""Live slots at risk now, least business time left first (the manager's at-risk list).

At risk means what ``core.clocks.status`` calls ``at_risk``: a running clock
(not met, not paused, not yet due) with at most a quarter of its budget left.
Time left is ``business_us(clock calendar, now, due)``: exact, because a
running clock's due instant is where its remaining budget runs out. It is
read from day rows (``risk_sql``), as the report does: with an index lookup
per clock, the list took 6-8 s over 100 000 live slots (bench/README.md).

One statement gives the page and the total: the at-risk slots are found once
(CTE ``risky``), counted, and the page is read after the cursor.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from taskflow.core import durations, reports
from taskflow.core.runs.filters import SlotFilter
from taskflow.store import calendar_days, db, queries, risk_sql
from taskflow.store.business_sql import epoch_us

#: Keyset position: (business µs left, slot id).
Cursor = tuple[int, str]

_DUE_US = epoch_us("k.due_at")
#: Due instants this far ahead read their day rows; later ones, the exact lookup.
_AHEAD = "interval '35 days'"


def _risky(where: str) -> str:
    """CTE ``risky``: each live slot ``where`` selects with an at-risk clock, and the least
    business µs left among them (``left_us``). Parameters: $1 now, $2 calendars, $3 their
    day lengths, $4 the at-risk share, $5 now in µs."""
    left = risk_sql.business_left("xd", "k.calendar", "k.due_at", _DUE_US, "$5::bigint")
    return f"""
    {calendar_days.ctes("$2::text[]", "$1::timestamptz", f"$1::timestamptz + {_AHEAD}")},
    cal_now AS ({risk_sql.cal_now("$2::text[]", "$3::bigint[]", "$1::timestamptz")}),
    risky AS (
        SELECT sl.id, min(x.left_us) AS left_us
        FROM slot sl
        JOIN sla_clock k ON k.slot = sl.id
        LEFT JOIN cal_now nw ON nw.calendar = k.calendar
        LEFT JOIN cal_day xd ON xd.calendar = k.calendar
            AND xd.day_no = {_DUE_US} / {calendar_days.DAY_US}
        CROSS JOIN LATERAL (SELECT {left} AS left_us) x
        WHERE {where} AND {risk_sql.running("k.met_at", "k.due_at", "$1", "k.pauses")}
          AND {risk_sql.within_share("x.left_us", "k.budget_us", "k.working_days", "$4")}
        GROUP BY sl.id
    )"""


async def at_risk(
    conn: db.Connection,
    *,
    now: datetime,
    day_us: dict[str, int],
    at_risk_left: float = reports.AT_RISK_LEFT,
    f: SlotFilter,
    after: Cursor | None,
    limit: int,
) -> tuple[list[tuple[queries.SlotRow, int]], int]:
    """A page of (row, business µs left) and how many live slots are at risk in all."""
    args: list[Any] = [
        now,
        list(day_us),
        list(day_us.values()),
        at_risk_left,
        durations.epoch_us(now),
    ]
    where = "sl.status IN ('pending', 'open', 'claimed')" + queries.filter_sql(f, args)
    keyset = ""
    if after is not None:
        args += [after[0], uuid.UUID(after[1])]
        keyset = f"WHERE (rk.left_us, rk.id) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(
        f"""WITH {_risky(where)}
        SELECT t.total, p.*
        FROM (SELECT count(*) AS total FROM risky) t
        LEFT JOIN LATERAL (
            SELECT {queries.ROW_COLUMNS}, rk.left_us
            FROM (SELECT * FROM risky rk {keyset} ORDER BY rk.left_us, rk.id
                  LIMIT {int(limit)}) rk
            JOIN slot sl ON sl.id = rk.id
            JOIN run r ON r.id = sl.run JOIN subject sub ON sub.id = r.subject
        ) p ON true
        ORDER BY p.left_us, p.id""",
        *args,
    )
    total = int(rows[0]["total"]) if rows else 0
    page = [(queries._slot_row(r), int(r["left_us"])) for r in rows if r["id"] is not None]
    return page, total
