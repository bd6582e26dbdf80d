"""A run's wall-clock lead time, split into worked and waiting, in total and per state.

Worked time is when at least one of the run's slots was held (claimed or
assigned, until released, satisfied or cancelled) and its clock not paused:
the union of those ranges, so two people working at once count once. Waiting
is the rest (open, pending, paused, or between states). Per state, the total
is the sum of its visits (``state.entered`` to the next entry, or the run's
end), worked the union of its slots' worked ranges. The ranges come from the
same SQL the report uses per slot (``measure_sql.held_lateral``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.reports import measure_sql


@dataclass(frozen=True)
class StateLeadTime:
    """Lead time spent in one state (every visit)."""

    state: str
    total_us: int
    worked_us: int
    #: The part of the waiting spent waiting on awaited children (docs/composition.md).
    children_us: int = 0

    @property
    def waiting_us(self) -> int:
        return self.total_us - self.worked_us


@dataclass(frozen=True)
class LeadTime:
    """Start to end (or now) of a run, and the part of it someone was working."""

    total_us: int
    worked_us: int
    states: tuple[StateLeadTime, ...]
    #: The part of the waiting spent waiting on awaited children.
    children_us: int = 0

    @property
    def waiting_us(self) -> int:
        return self.total_us - self.worked_us


#: The statements of ``reports/lead_time.sql``, the report's per-slot pieces filled in.
SQL = with_columns(
    sql.statements("reports/lead_time"),
    clock=measure_sql.clock_lateral("sl", None),
    held=measure_sql.held_lateral("sl", "$2"),
    paused=measure_sql.paused("c.pauses", "$2"),
    worked=measure_sql.measure("range_agg(w.worked)"),
)


async def of_run(conn: db.Connection, run_id: str, now: datetime) -> LeadTime:
    """The run's lead time at ``now`` (zero when the run does not exist)."""
    row = await conn.fetchrow(SQL["of_run"], uuid.UUID(run_id), now)
    if row is None:
        return LeadTime(0, 0, ())
    children = await conn.fetchrow(SQL["on_children"], uuid.UUID(run_id), now)
    assert children is not None
    by_state = children["states"]
    return LeadTime(
        total_us=int(row["total_us"]),
        worked_us=int(row["worked_us"] or 0),
        states=tuple(
            StateLeadTime(state, int(total), int(worked or 0), int(by_state.get(state, 0)))
            for state, total, worked in row["states"]
        ),
        children_us=int(children["total_us"]),
    )
