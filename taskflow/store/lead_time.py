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

from taskflow.store import db, measure_sql


@dataclass(frozen=True)
class StateLeadTime:
    """Lead time spent in one state (every visit)."""

    state: str
    total_us: int
    worked_us: int

    @property
    def waiting_us(self) -> int:
        return self.total_us - self.worked_us


@dataclass(frozen=True)
class LeadTime:
    """Start to end (or now) of a run, and the part of it someone was working."""

    total_us: int
    worked_us: int
    states: tuple[StateLeadTime, ...]

    @property
    def waiting_us(self) -> int:
        return self.total_us - self.worked_us


_WORKED = measure_sql.measure("range_agg(w.worked)")


def _statement() -> str:
    clock = measure_sql.clock_lateral("sl", None)
    paused = measure_sql.paused("c.pauses", "$2")
    return f"""
    WITH r AS (
        SELECT id, started_at, greatest(started_at, least(coalesce(ended_at, $2), $2)) AS ended
        FROM run WHERE id = $1
    ),
    visits AS (
        SELECT a.details->>'state' AS state, a.at AS entered, a.id,
               least(coalesce(lead(a.at) OVER (ORDER BY a.at, a.id), r.ended), r.ended) AS left_at
        FROM audit_event a JOIN r ON a.run = r.id
        WHERE a.kind = 'state.entered'
    ),
    w AS (
        SELECT sl.state, ev.held - coalesce({paused}, '{{}}') AS worked
        FROM slot sl {clock} {measure_sql.held_lateral("sl", "$2")}
        WHERE sl.run = $1 AND ev.held IS NOT NULL
    ),
    per_state AS (
        SELECT v.state, min(v.id) AS first_entry,
               sum((extract(epoch FROM v.left_at - v.entered) * 1000000)::bigint) AS total_us,
               (SELECT {_WORKED} FROM w WHERE w.state = v.state) AS worked_us
        FROM visits v GROUP BY v.state
    )
    SELECT (extract(epoch FROM r.ended - r.started_at) * 1000000)::bigint AS total_us,
           (SELECT {_WORKED} FROM w) AS worked_us,
           coalesce((SELECT json_agg(json_build_array(p.state, p.total_us, p.worked_us)
                                     ORDER BY p.first_entry) FROM per_state p), '[]') AS states
    FROM r"""


_SQL = _statement()


async def of_run(conn: db.Connection, run_id: str, now: datetime) -> LeadTime:
    """The run's lead time at ``now`` (zero when the run does not exist)."""
    row = await conn.fetchrow(_SQL, uuid.UUID(run_id), now)
    if row is None:
        return LeadTime(0, 0, ())
    return LeadTime(
        total_us=int(row["total_us"]),
        worked_us=int(row["worked_us"] or 0),
        states=tuple(
            StateLeadTime(state, int(total), int(worked or 0))
            for state, total, worked in row["states"]
        ),
    )
