"""Live slots at risk now, least business time left first (the manager's at-risk list).

At risk means what ``core.clocks.status`` calls ``at_risk``: a running clock
(not met, not paused, not yet due) with at most a quarter of its budget left.
Time left is ``business_us(clock calendar, now, due)``: exact, because a
running clock's due instant is where its remaining budget runs out. It is
read from day rows (``risk_sql``), as the report does: with an index lookup
per clock, the list took 6-8 s over 100 000 live slots (bench/README.md).

One statement (``reports/at_risk.sql``) gives the page and the total: the at-risk
slots are found once (CTE ``risky``), counted, and the page is read after the cursor.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from taskflow.core.common import durations
from taskflow.core.reports import reports
from taskflow.core.slots.filters import SlotFilter
from taskflow.store.clocks import risk_sql
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import Statement, with_columns
from taskflow.store.slots import queries

#: Keyset position: (business µs left, slot id).
Cursor = tuple[int, str]

#: The statements of ``reports/at_risk.sql``, the shared pieces filled in.
SQL = with_columns(
    sql.statements("reports/at_risk"),
    **risk_sql.AT_RISK_MARKERS,
    row_columns=queries.ROW_COLUMNS,
)


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
    st = Statement(
        SQL["at_risk"],
        now,
        list(day_us),
        list(day_us.values()),
        at_risk_left,
        durations.epoch_us(now),
        after[0] if after is not None else None,
        uuid.UUID(after[1]) if after is not None else None,
    )
    rows = await conn.fetch(*_flat(queries.slot_filters(st, f).build(limit=limit)))
    total = int(rows[0]["total"]) if rows else 0
    page = [(queries._slot_row(r), int(r["left_us"])) for r in rows if r["id"] is not None]
    return page, total


def _flat(built: tuple[str, list[Any]]) -> list[Any]:
    return [built[0], *built[1]]
