"""Report measures stored on ended slots (``core/reports/slot_measures.py`` says what they are).

The write path measures a slot when it ends (``unit_of_work.py``):
one read of the ended slots' moves, then one UPDATE that stores the measures
with the clock's outcome (met, and from when it counts as breached) taken from
the ``sla_clock`` row just saved, as the report reads it. Slots that ended
before the measures existed are measured on read by the report, or stored in
bulk by :func:`backfill` (the report's own per-slot SQL).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from taskflow.core.reports import slot_measures
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.reports import measure_sql, report_sql

#: Live slots picked up whose time to pickup is not kept (picked up before it was).
UNKEPT_PICKUP = f"sl.pickup_clock IS NULL AND sl.picked_at IS NOT NULL AND {report_sql.NOT_ENDED}"


#: The backfill's window (parameters $2, $3 of ``measure_sql.base_args``).
_WINDOW = "sl.opened_at >= $2 AND sl.opened_at < $3"

#: The statements of ``reports/slot_measures.sql``, the shared pieces filled in.
SQL = with_columns(
    sql.statements("reports/slot_measures"),
    holds=measure_sql.holds("a"),
    is_move=measure_sql.is_move("a"),
    unkept_pickup=UNKEPT_PICKUP,
    ended=report_sql.ENDED,
    measured_ended=measure_sql.measured_ctes(
        None, f"{_WINDOW} AND sl.measured_clock IS NULL AND {report_sql.ENDED}"
    ),
    measured_picked=measure_sql.measured_ctes(None, f"{_WINDOW} AND {UNKEPT_PICKUP}"),
)


async def moves_of(
    conn: db.Connection, run_ids: Sequence[str], slot_ids: Sequence[str]
) -> dict[str, list[slot_measures.Move]]:
    """The held/released/ended lines of these slots' timelines, in timeline order."""
    rows = await conn.fetch(
        SQL["moves_of"],
        sorted({uuid.UUID(r) for r in run_ids}),
        [uuid.UUID(s) for s in slot_ids],
    )
    found: dict[str, list[slot_measures.Move]] = {s: [] for s in slot_ids}
    for row in rows:
        move = slot_measures.Move(row["kind"], row["at"], row["held"])
        found[str(row["slot"])].append(move)
    return found


async def save(conn: db.Connection, measures: Mapping[str, slot_measures.Measures]) -> None:
    """Store the measures of ended slots (after their clocks were saved)."""
    if not measures:
        return
    await conn.executemany(
        SQL["save"],
        [
            (
                uuid.UUID(slot_id),
                m.clock,
                m.pickup_business,
                m.pickup_real,
                m.done_business,
                m.done_real,
                m.worked,
            )
            for slot_id, m in measures.items()
        ],
    )


async def first_unmeasured(conn: db.Connection, start: datetime) -> datetime | None:
    """When the earliest slot opened (from ``start``) that ended without its report
    measures, or was picked up without its time to pickup kept; None when there is none."""
    found: datetime | None = await conn.fetchval(SQL["first_unmeasured"], start)
    return found


async def backfill(
    conn: db.Connection,
    now: datetime,
    start: datetime,
    end: datetime,
    workflow_calendars: dict[str, str | None],
    day_us: dict[str, int],
) -> int:
    """Store measures on ended, unmeasured slots opened in ``[start, end)``, and the time to
    pickup of live ones picked up without it being kept: how many slots.

    The report's own per-slot SQL (the calendars must cover the years, as for a
    report), so stored and on-read numbers agree by construction.
    """
    args = measure_sql.base_args(now, start, end, workflow_calendars, day_us, 0.0)
    # The lock order (docs/architecture.md): the runs of the slots about to be written first,
    # in id order; a run a use case holds is waited for, never the other way round.
    await conn.execute(SQL["lock_backfill_runs"], start, end)
    await conn.execute(report_sql.PLANNER)
    count = 0
    for statement in (SQL["backfill_ended"], SQL["backfill_picked"]):
        status = await conn.execute(statement, *args)
        count += int(status.split()[-1])
    return count


async def tidy_after_backfill(conn: db.Connection) -> None:
    """Vacuum and analyse the slot table after a backfill rewrote many of its rows: until
    then the report's index-only scan of ended slots (``slot_ended_report``) visits the
    table for every rewritten page, and the planner counts the old rows. Outside any
    transaction (VACUUM refuses to run in one)."""
    await conn.execute(SQL["tidy"])
