"""Live slots at risk now, least business time left first (the manager's at-risk list).

At risk means what ``core.clocks.status`` calls ``at_risk``: a running clock
(not met, not paused, not yet due) with at most a quarter of its budget left.
Time left is ``business_us(clock calendar, now, due)``: exact, because a
running clock's due instant is where its remaining budget runs out.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from taskflow.core import reports
from taskflow.core.runs.filters import SlotFilter
from taskflow.store import business_sql, db, queries

#: Keyset position: (business µs left, slot id).
Cursor = tuple[int, str]


_LEFT = business_sql.business_us("k.calendar", "$1::timestamptz", "k.due_at")
#: The LATERAL giving ``x.left_us``, the least time left among the slot's at-risk clocks.
_RISKY = f"""JOIN LATERAL (
        SELECT min({_LEFT}) AS left_us
        FROM sla_clock k
        LEFT JOIN unnest($2::text[], $3::bigint[]) AS d(calendar, day_us)
            ON d.calendar = k.calendar
        WHERE k.slot = sl.id AND k.met_at IS NULL AND k.due_at > $1
          AND NOT (jsonb_array_length(k.pauses) > 0 AND k.pauses->-1->>1 IS NULL)
          AND {_LEFT} <= $4::float8
              * (k.budget_us + k.working_days * coalesce(d.day_us, 86400000000))
    ) x ON x.left_us IS NOT NULL"""


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
    args: list[Any] = [now, list(day_us), list(day_us.values()), at_risk_left]
    where = "sl.status IN ('pending', 'open', 'claimed')" + queries.filter_sql(f, args)
    risky = _RISKY
    total = await conn.fetchval(f"SELECT count(*) FROM slot sl {risky} WHERE {where}", *args)
    keyset = ""
    if after is not None:
        args += [after[0], uuid.UUID(after[1])]
        keyset = f" AND (x.left_us, sl.id) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(
        f"""SELECT {queries.ROW_COLUMNS}, x.left_us
        FROM slot sl {risky}
        JOIN run r ON r.id = sl.run JOIN subject sub ON sub.id = r.subject
        WHERE {where}{keyset}
        ORDER BY x.left_us, sl.id LIMIT {int(limit)}""",
        *args,
    )
    return [(queries._slot_row(r), int(r["left_us"])) for r in rows], int(total)
