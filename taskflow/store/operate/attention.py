"""Needs attention in SQL: one branch per reason, each read from its own partial index.

``ITEMS`` unions the branches (``$1`` idle-before instant, ``$2`` expiring-before
instant, ``$3`` workflows or null for all, ``$4`` reasons or null for all) and
pages them in (since, reason, ref) order; ``COUNT`` counts the same rows and
``COUNTS`` counts them by reason (the metric). The indexes are in
``schema_extras.py``; ``tests/integration/test_attention_index.py`` EXPLAINs them.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.operate.attention import Item, Reason, Windows
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import compose, with_columns

#: The statements of ``operate/attention.sql``: the branches, then (below) the three statements
#: over their union, filled in.
SQL = sql.statements("operate/attention")

#: reason -> its branch (the run is joined by primary key for its workflow and state). Every
#: reason but the deployment's own, which concern no run: REPLICA_LAGGING (the service asks
#: the replica) and CALENDAR_FEED_FAILING (``calendar_feed``'s rows), both added by
#: ``service/operate/attention.py``.
BRANCHES: dict[Reason, str] = {
    Reason.ROUTE_UNMATCHED: SQL["route_unmatched"],
    Reason.TIMER_DEAD: SQL["timer_dead"],
    Reason.TIMER_FAILING: SQL["timer_failing"],
    Reason.HELD_BY_INACTIVE: SQL["held_by_inactive"],
    Reason.BREACHED_UNHELD: SQL["breached_unheld"],
    Reason.IDLE: SQL["idle"],
    Reason.EVENT_EXPIRING: SQL["event_expiring"],
    Reason.WEBHOOK_DISABLED: SQL["webhook_disabled"],
    Reason.STEP_PARKED: SQL["step_parked"],
    Reason.COMPENSATION_FAILED: SQL["compensation_failed"],
    Reason.AUTOMATION_STOPPED: SQL["automation_stopped"],
}


def _uncommented(text: str) -> str:
    """``text`` without its comment lines (a piece filled into other statements)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("--"))


_UNION = " UNION ALL ".join(f"({branch})" for branch in BRANCHES.values())
_WANTED = compose(_uncommented(SQL["wanted"]), union=_UNION)
_RUN_IDS = _uncommented(SQL["run_ids"])
SQL = with_columns({name: SQL[name] for name in ("items", "count", "counts")}, wanted=_WANTED)

#: A page: ``$5``, ``$6``, ``$7`` the last (since, reason, ref) seen (nulls: from the start),
#: ``$8`` the page size.
ITEMS = SQL["items"]
#: How many items match in all.
COUNT = SQL["count"]
#: How many items of each reason (every workflow).
COUNTS = SQL["counts"]


def run_ids_sql(
    args: list[Any],
    windows: Windows,
    *,
    workflows: Collection[str] | None,
    reasons: Collection[Reason] | None,
) -> str:
    """A subquery of the runs with an item (of ``reasons``; in ``workflows``), its parameters
    appended to ``args``: the ``runs`` list's needs-attention filter, the same branches
    (and partial indexes) as the list itself."""
    names = {}
    for n, value in enumerate(_args(windows, workflows, reasons), start=1):
        args.append(value)
        names[str(n)] = f"${len(args)}"
    wanted = re.sub(r"\$([1-4])(?!\d)", lambda m: names[m.group(1)], _WANTED)
    return compose(_RUN_IDS, wanted=wanted)


def _item(row: asyncpg.Record) -> Item:
    return db.record_as(
        Item,
        row,
        columns={**db.REFERENCES, "timer_id": "timer"},
        reason=Reason(row["reason"]),
        detail=row["detail"] or "",
    )


def _args(
    windows: Windows, workflows: Collection[str] | None, reasons: Collection[Reason] | None
) -> tuple[Any, ...]:
    return (
        windows.idle_before,
        windows.expiring_before,
        sorted(workflows) if workflows is not None else None,
        sorted(r.value for r in reasons) if reasons is not None else None,
    )


async def page(
    conn: db.Connection,
    windows: Windows,
    *,
    workflows: Collection[str] | None,
    reasons: Collection[Reason] | None,
    after: tuple[datetime, str, str] | None,
    limit: int,
) -> tuple[list[Item], int]:
    """Up to ``limit`` items after ``after`` in (since, reason, ref) order, and the total."""
    args = _args(windows, workflows, reasons)
    since, reason, ref = after if after is not None else (None, None, None)
    found = await conn.fetch(ITEMS, *args, since, reason, ref, limit)
    total = await conn.fetchval(COUNT, *args)
    return [_item(r) for r in found], int(total)


async def counts(conn: db.Connection, windows: Windows) -> dict[Reason, int]:
    """Items per reason of :data:`BRANCHES` over every workflow (zero for reasons with none)."""
    found = await conn.fetch(COUNTS, *_args(windows, None, None))
    by_reason = {r: 0 for r in BRANCHES}
    for row in found:
        by_reason[Reason(row["reason"])] = int(row["n"])
    return by_reason
