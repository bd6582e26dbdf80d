"""Needs attention in SQL: one branch per reason, each read from its own partial index.

``ITEMS`` unions the branches (``$1`` idle-before instant, ``$2`` expiring-before
instant, ``$3`` workflows or null for all, ``$4`` reasons or null for all) and
pages them in (since, reason, ref) order; ``COUNT`` counts the same rows and
``COUNTS`` counts them by reason (the metric). The indexes are in
``schema_extras.py``; ``tests/integration/test_attention_index.py`` EXPLAINs them.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import asyncpg

from taskflow.core.attention import Item, Reason, Windows
from taskflow.store import db

_COLUMNS = "reason, since, ref, run, workflow, state, slot, timer, principal, until, detail"

#: reason -> its branch (the run is joined by primary key for its workflow and state).
BRANCHES: dict[Reason, str] = {
    Reason.ROUTE_UNMATCHED: """
        SELECT 'ROUTE_UNMATCHED' AS reason, r.unmatched_at AS since, r.id::text AS ref,
               r.id AS run, r.workflow, r.state, NULL::uuid AS slot, NULL::bigint AS timer,
               NULL::text AS principal, NULL::timestamptz AS until,
               'no route of ' || r.state || ' matched' AS detail
        FROM run r
        WHERE r.unmatched_at IS NOT NULL AND r.status = 'active'
          AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
    Reason.TIMER_DEAD: """
        SELECT 'TIMER_DEAD', COALESCE(t.failed_at, t.updated_at), t.id::text, r.id, r.workflow,
               r.state, t.slot, t.id, NULL, NULL,
               t.kind || ' ' || t.part || ': ' || COALESCE(t.last_error, '')
        FROM timer t JOIN run r ON r.id = t.run
        WHERE t.status = 'dead' AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
    Reason.TIMER_FAILING: """
        SELECT 'TIMER_FAILING', COALESCE(t.planned_at, t.failed_at), t.id::text, r.id,
               r.workflow, r.state, t.slot, t.id, NULL, t.due_at,
               t.kind || ' ' || t.part || ' failed ' || t.attempts || ' time(s): '
                 || COALESCE(t.last_error, '')
        FROM timer t JOIN run r ON r.id = t.run
        WHERE t.status = 'armed' AND t.attempts > 0
          AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
    Reason.HELD_BY_INACTIVE: """
        SELECT 'HELD_BY_INACTIVE', COALESCE(s.held_since, s.claimed_at, s.updated_at),
               s.id::text, r.id, r.workflow, r.state, s.id, NULL, p.id, NULL,
               s.name || ' is held by deactivated ' || p.id
        FROM principal p
        JOIN slot s ON s.holder = p.id AND s.status = 'claimed'
        JOIN run r ON r.id = s.run
        WHERE NOT p.active AND ($3::text[] IS NULL OR s.workflow = ANY($3::text[]))""",
    Reason.BREACHED_UNHELD: """
        SELECT 'BREACHED_UNHELD', s.sla_breached_at, s.id::text, r.id, r.workflow, r.state,
               s.id, NULL, NULL, NULL, s.name || ' breached ' || s.sla_milestone || ' unheld'
        FROM slot s JOIN run r ON r.id = s.run
        WHERE s.status = 'open' AND s.sla_breached_at IS NOT NULL
          AND ($3::text[] IS NULL OR s.workflow = ANY($3::text[]))""",
    Reason.IDLE: """
        SELECT 'IDLE', GREATEST(r.updated_at, (SELECT max(x.updated_at) FROM slot x
                                               WHERE x.run = r.id)),
               r.id::text, r.id, r.workflow, r.state, NULL, NULL, NULL, NULL,
               'no change in ' || r.state
        FROM run r
        WHERE r.status = 'active' AND r.updated_at < $1
          AND NOT EXISTS (SELECT 1 FROM slot x WHERE x.run = r.id AND x.updated_at >= $1)
          AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
    Reason.EVENT_EXPIRING: """
        SELECT 'EVENT_EXPIRING', e.arrived_at, e.id::text, r.id, r.workflow, r.state, NULL,
               NULL, e.actor, e.expires_at, 'kept event ' || e.event || ' expires'
        FROM event_buffer e JOIN run r ON r.id = e.run
        WHERE e.expires_at <= $2 AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
    Reason.STEP_PARKED: """
        SELECT 'STEP_PARKED', st.updated_at, st.id::text, r.id, r.workflow, r.state, NULL,
               NULL, NULL, NULL,
               st.kind || ' ' || st.action || ' failed ' || st.attempts || ' time(s): '
                 || COALESCE(st.last_error, '')
        FROM step st JOIN run r ON r.id = st.run
        WHERE st.status = 'parked' AND r.status = 'active' AND st.visit = r.visit
          AND ($3::text[] IS NULL OR r.workflow = ANY($3::text[]))""",
}

_UNION = " UNION ALL ".join(f"({sql})" for sql in BRANCHES.values())
_WANTED = f"SELECT * FROM ({_UNION}) a WHERE ($4::text[] IS NULL OR a.reason = ANY($4::text[]))"

#: A page: ``$5``, ``$6``, ``$7`` the last (since, reason, ref) seen (nulls: from the start),
#: ``$8`` the page size.
ITEMS = (
    f"SELECT {_COLUMNS} FROM ({_WANTED}) w "
    "WHERE $5::timestamptz IS NULL OR (w.since, w.reason, w.ref) > ($5, $6::text, $7::text) "
    "ORDER BY w.since, w.reason, w.ref LIMIT $8"
)
#: How many items match in all.
COUNT = f"SELECT count(*) FROM ({_WANTED}) w"
#: How many items of each reason (every workflow).
COUNTS = f"SELECT w.reason, count(*) AS n FROM ({_WANTED}) w GROUP BY w.reason"


def _item(row: asyncpg.Record) -> Item:
    return Item(
        reason=Reason(row["reason"]),
        since=row["since"],
        ref=row["ref"],
        run_id=str(row["run"]),
        workflow=row["workflow"],
        state=row["state"],
        slot_id=str(row["slot"]) if row["slot"] is not None else None,
        timer_id=row["timer"],
        principal=row["principal"],
        until=row["until"],
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
    """Items per reason over every workflow (zero for reasons with none)."""
    found = await conn.fetch(COUNTS, *_args(windows, None, None))
    by_reason = {r: 0 for r in Reason}
    for row in found:
        by_reason[Reason(row["reason"])] = int(row["n"])
    return by_reason
