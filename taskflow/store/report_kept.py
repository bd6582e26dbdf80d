"""What a live slot keeps for the SLA report, written with its due instant.

Carrying out a decision's deadlines writes each slot's due instant in one
UPDATE (``deadlines.DeadlineWrites``); the same UPDATE keeps on the slot what
the report reads of a live slot without probing other tables: its time to
pickup, final from the first pickup (``service/deadlines.pickups``), and a
copy of its report clock (finished, else assigned: ``sla_*``) taken from the
clock rows the statement's upsert returns, as stored (a breach recorded
earlier included). The worker's breach record keeps the copy too
(``timer_batch.mark_breached``). docs/reports.md, "What a live slot carries".
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class PickupRow:
    """A live slot's time to pickup (µs) on the clock a report measures it on ('' for none)."""

    slot_id: str
    clock: str
    business_us: int
    real_us: int


#: The columns of the report's clock a slot keeps a copy of (``sla_<column>``).
CLOCK_FIELDS = ("milestone", "calendar", "budget_us", "working_days", "pauses", "met_at", "due_at",
        "breached_at")  # fmt: skip
#: What the clock upsert returns for :func:`slot_update` and :func:`clock_copy`.
CLOCK_COLUMNS = ", ".join(CLOCK_FIELDS)
#: ``assigned`` never replaces ``finished`` (the only milestones).
_TAKES_CLOCK = "(k.milestone = 'finished' OR s.sla_milestone IS DISTINCT FROM 'finished')"
_CLOCK_SET = ", ".join(
    f"sla_{c} = CASE WHEN k.slot IS NOT NULL AND {_TAKES_CLOCK} THEN k.{c} ELSE s.sla_{c} END"
    for c in CLOCK_FIELDS
)


def _report_clocks(cte: str) -> str:
    """Each slot's report clock among the rows the upsert CTE ``cte`` returned."""
    return (
        f"(SELECT DISTINCT ON (slot) slot, {CLOCK_COLUMNS} FROM {cte} "
        "ORDER BY slot, milestone DESC)"
    )


def clock_copy(clocks_cte: str) -> str:
    """An UPDATE of the slots' copy of their report clock from the upserted clock rows."""
    return (
        f"UPDATE slot s SET {_CLOCK_SET} FROM {_report_clocks(clocks_cte)} k "
        f"WHERE s.id = k.slot AND {_TAKES_CLOCK}"
    )


def slot_update(
    due: Sequence[tuple[str, int, datetime | None]],
    pickups: Sequence[PickupRow],
    arg: Callable[[Any], str],
    clocks_cte: str | None,
) -> str:
    """One UPDATE of the slots' visit and due instant, of the time to pickup of those in
    ``pickups`` and of the copy of their report clock from the clock rows ``clocks_cte``
    upserted, if any (one statement may update a row once); rows already equal are skipped."""
    p = {r.slot_id: r for r in pickups}
    rows = [(i, v, d, p.get(i)) for i, v, d in due]
    with_clocks = clocks_cte is not None
    clock_set = f", {_CLOCK_SET}" if with_clocks else ""
    clock_join = f"LEFT JOIN {_report_clocks(clocks_cte)} k ON k.slot = d.id" if clocks_cte else ""
    clock_changed = " OR k.slot IS NOT NULL" if with_clocks else ""
    return f"""UPDATE slot s SET visit = d.visit, due_at = d.due,
            pickup_clock = coalesce(d.clock, s.pickup_clock),
            pickup_biz_us = coalesce(d.biz, s.pickup_biz_us),
            pickup_real_us = coalesce(d.real, s.pickup_real_us){clock_set}
        FROM unnest({arg([uuid.UUID(i) for i, _, _, _ in rows])}::uuid[],
                    {arg([v for _, v, _, _ in rows])}::int[],
                    {arg([d for _, _, d, _ in rows])}::timestamptz[],
                    {arg([r.clock if r else None for *_, r in rows])}::text[],
                    {arg([r.business_us if r else None for *_, r in rows])}::bigint[],
                    {arg([r.real_us if r else None for *_, r in rows])}::bigint[])
             AS d(id, visit, due, clock, biz, real)
        {clock_join}
        WHERE s.id = d.id
          AND ((s.visit, s.due_at) IS DISTINCT FROM (d.visit, d.due){clock_changed}
               OR (d.clock IS NOT NULL AND (s.pickup_clock, s.pickup_biz_us, s.pickup_real_us)
                   IS DISTINCT FROM (d.clock, d.biz, d.real)))"""
