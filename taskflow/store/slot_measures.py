"""Report measures stored on ended slots (``core/slot_measures.py`` says what they are).

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

from taskflow.core import slot_measures
from taskflow.store import db, measure_sql, report_sql

#: Live slots picked up whose time to pickup is not kept (picked up before it was).
UNKEPT_PICKUP = (
    "sl.pickup_clock IS NULL AND sl.picked_at IS NOT NULL "
    "AND sl.status NOT IN ('satisfied', 'cancelled')"
)


def outcome(met_at: str, due_at: str, breached_at: str) -> str:
    """SET items for the clock's outcome as the report reads it: met, and breached from the
    first of the recorded breach and (met late, or never met) the due instant."""
    return (
        f"clock_met = ({met_at} IS NOT NULL), breach_from = least({breached_at}, "
        f"CASE WHEN {met_at} IS NULL OR {due_at} < {met_at} THEN {due_at} END)"
    )


async def moves_of(
    conn: db.Connection, run_ids: Sequence[str], slot_ids: Sequence[str]
) -> dict[str, list[slot_measures.Move]]:
    """The held/released/ended lines of these slots' timelines, in timeline order."""
    rows = await conn.fetch(
        f"SELECT a.slot, a.kind, a.at, {measure_sql.holds('a')} AS held FROM audit_event a "
        "WHERE a.run = ANY($1::uuid[]) AND a.slot = ANY($2::uuid[]) "
        f"AND {measure_sql.is_move('a')} ORDER BY a.slot, a.at, a.id",
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
        f"""
        UPDATE slot SET measured_clock = $2, pickup_biz_us = $3, pickup_real_us = $4,
                        done_biz_us = $5, done_real_us = $6, worked_us = $7,
                        {outcome("k.met_at", "k.due_at", "k.breached_at")}
        -- One row even without a clock (then all null: not met, never breached).
        FROM (SELECT max(c.met_at) AS met_at, max(c.due_at) AS due_at,
                     max(c.breached_at) AS breached_at
              FROM sla_clock c WHERE c.slot = $1 AND c.milestone = $2) k
        WHERE slot.id = $1
        """,
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
    found: datetime | None = await conn.fetchval(
        "SELECT min(opened_at) FROM slot sl WHERE ((sl.measured_clock IS NULL "
        f"AND sl.status IN ('satisfied', 'cancelled')) OR {UNKEPT_PICKUP}) "
        "AND sl.opened_at >= $1",
        start,
    )
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
    window = "sl.opened_at >= $2 AND sl.opened_at < $3"
    ended = f"{window} AND sl.measured_clock IS NULL AND {report_sql.ENDED}"
    picked = f"{window} AND {UNKEPT_PICKUP}"
    # The lock order (docs/architecture.md): the runs of the slots about to be written first,
    # in id order; a run a use case holds is waited for, never the other way round.
    await conn.execute(
        "SELECT 1 FROM run WHERE id IN (SELECT sl.run FROM slot sl WHERE sl.opened_at >= $1 "
        f"AND sl.opened_at < $2 AND ((sl.measured_clock IS NULL AND {report_sql.ENDED}) "
        f"OR {UNKEPT_PICKUP})) ORDER BY id FOR NO KEY UPDATE",
        start,
        end,
    )
    await conn.execute(report_sql.PLANNER)
    count = 0
    for where, columns in (
        (
            ended,
            f"""measured_clock = mc.clock_milestone, pickup_biz_us = mc.pickup_biz,
                pickup_real_us = mc.pickup_real, done_biz_us = mc.done_biz,
                done_real_us = mc.done_real, worked_us = mc.worked_us,
                {outcome("mc.met_at", "mc.due_at", "mc.breached_at")}""",
        ),
        (
            picked,
            "pickup_clock = mc.clock_milestone, pickup_biz_us = mc.pickup_biz, "
            "pickup_real_us = mc.pickup_real",
        ),
    ):
        # A fence: inlined into the UPDATE, the day-row joins were planned as nested loops
        # (minutes for 100 k slots, bench/report.py); on their own they hash, as in a report.
        sql = f"""{measure_sql.measured_ctes(None, where)}
        UPDATE slot SET {columns} FROM (SELECT * FROM mc OFFSET 0) mc WHERE slot.id = mc.id"""
        status = await conn.execute(sql, *args)
        count += int(status.split()[-1])
    return count


async def tidy_after_backfill(conn: db.Connection) -> None:
    """Vacuum and analyse the slot table after a backfill rewrote many of its rows: until
    then the report's index-only scan of ended slots (``slot_ended_report``) visits the
    table for every rewritten page, and the planner counts the old rows. Outside any
    transaction (VACUUM refuses to run in one)."""
    await conn.execute("VACUUM (ANALYZE) slot")
