"""What the SLA report measures on one slot, taken once the slot has ended.

A slot's pickup and completion times and its worked time stop changing when
it is satisfied or cancelled, so the write path stores them then and the
report aggregates stored numbers (only live slots are measured on read).
Time to pickup is final from the first pickup on, so a live slot carries it
from then (:func:`pickup`).
These are the same definitions the report's SQL applies on read
(``store/reports/report_sql.py``), and must give the same microseconds:

- the clock measured on is the slot's finished clock, else its assigned one
  (none: no pauses, and the workflow's calendar);
- business time is on that clock's calendar, else the workflow's;
- pickup runs from opening to the first claim or assignment (else to
  completion), completion from opening to satisfied, both minus the clock's
  paused intervals inside them;
- worked time is the held intervals of the slot's timeline (a claim or an
  assignment until the next move) minus the paused intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow.core.clocks import calendars, clocks
from taskflow.core.common import durations
from taskflow.core.slots import holding


@dataclass(frozen=True)
class Move:
    """One line of a slot's timeline that changes who holds it."""

    kind: str
    at: datetime
    #: Whether it holds the slot; None: as its kind says (a claim or an assignment does).
    held: bool | None = None

    @property
    def holds(self) -> bool:
        return self.kind in holding.HELD_KINDS if self.held is None else self.held


@dataclass(frozen=True)
class Measures:
    """A slot's report measures in µs (None: the slot was never picked up / completed)."""

    #: Milestone of the clock measured on; '' when the slot has none.
    clock: str
    pickup_business: int | None
    pickup_real: int | None
    done_business: int | None
    done_real: int | None
    worked: int


def report_clock(ledgers: Sequence[clocks.Clock]) -> clocks.Clock | None:
    """The clock a report reads for a slot when no milestone is asked: finished, else another."""
    for c in ledgers:
        if c.milestone == "finished":
            return c
    return ledgers[0] if ledgers else None


def _us(value: timedelta) -> int:
    return value // durations.US


def _between(cal: calendars.BusinessClock, t0: datetime, t1: datetime) -> int:
    return _us(cal.elapsed(t0, t1)) if t1 > t0 else 0


def _less_pauses(
    cal: calendars.BusinessClock,
    opened: datetime,
    end: datetime | None,
    pauses: Sequence[tuple[datetime, datetime]],
) -> int | None:
    """Time from ``opened`` to ``end`` on ``cal`` minus the pauses' parts inside it."""
    if end is None:
        return None
    paused = sum(_between(cal, max(a, opened), min(b, end)) for a, b in pauses)
    return _between(cal, opened, end) - paused


def _merged(ranges: Sequence[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    for a, b in sorted(r for r in ranges if r[1] > r[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def held(moves: Sequence[Move], end: datetime) -> list[tuple[datetime, datetime]]:
    """Held intervals: each claim or assignment until the next move (or ``end``)."""
    found = []
    for i, move in enumerate(moves):
        if move.holds:
            until = min(moves[i + 1].at if i + 1 < len(moves) else end, end)
            if move.at < until:
                found.append((move.at, until))
    return found


def pickup(
    *,
    opened_at: datetime,
    picked_at: datetime | None,
    clock: clocks.Clock | None,
    calendar: calendars.BusinessClock,
    end: datetime,
) -> tuple[int | None, int | None]:
    """Time to pickup in business and real µs, minus the clock's pauses (open ones up to
    ``end``, which is at or after the pickup). Final once the slot is picked up: a pause
    cannot start before now, so none that starts later falls inside it."""
    pauses = [(p.start, max(p.start, p.end or end)) for p in clock.pauses] if clock else []
    return (
        _less_pauses(calendar, opened_at, picked_at, pauses),
        _less_pauses(calendars.REAL_TIME, opened_at, picked_at, pauses),
    )


def measure(
    *,
    opened_at: datetime,
    claimed_at: datetime | None,
    satisfied_at: datetime | None,
    ended_at: datetime,
    clock: clocks.Clock | None,
    calendar: calendars.BusinessClock,
    moves: Sequence[Move],
) -> Measures:
    """The measures of a slot that ended at ``ended_at``, its timeline ``moves`` in order."""
    pauses = [(p.start, max(p.start, p.end or ended_at)) for p in clock.pauses] if clock else []
    held_ranges = held(moves, ended_at)
    picked = next((m.at for m in moves if m.holds), None)
    picked = picked or claimed_at or satisfied_at
    worked = 0
    paused = _merged(pauses)
    for a, b in _merged(held_ranges):
        overlap = sum(_us(min(b, pb) - max(a, pa)) for pa, pb in paused if min(b, pb) > max(a, pa))
        worked += _us(b - a) - overlap
    real = calendars.REAL_TIME
    pickup_business, pickup_real = pickup(
        opened_at=opened_at, picked_at=picked, clock=clock, calendar=calendar, end=ended_at
    )
    return Measures(
        clock=clock.milestone if clock else "",
        pickup_business=pickup_business,
        pickup_real=pickup_real,
        done_business=_less_pauses(calendar, opened_at, satisfied_at, pauses),
        done_real=_less_pauses(real, opened_at, satisfied_at, pauses),
        worked=worked,
    )
