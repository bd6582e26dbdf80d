"""The deadlines a clock had, each with the interval it was in force (docs/sla.md,
"Recompute policies").

A clock's ledger keeps every budget change (``Clock.recomputes``); from it the deadline in
force at any instant is derived again, never rewritten: the SLA report and ``Clock.terms``
read a breach off the deadline that was in force when it happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskflow.core.clocks import calendars, clocks


@dataclass(frozen=True)
class Term:
    """One deadline and when it was in force: from ``since`` until ``until`` (None: still)."""

    since: datetime
    until: datetime | None
    due_at: datetime | None
    budget: str
    #: The recompute that began it; None for the first (the clock started).
    policy: str | None
    #: Its deadline passed while it was in force (a later ``retroactive`` one judges again).
    breached: bool


def listed(clock: clocks.Clock) -> list[tuple[datetime, clocks.Clock]]:
    """Every term of the clock, oldest first (``clocks.term``)."""
    return [clocks.term(clock, i) for i in range(len(clock.recomputes) + 1)]


def in_force(
    clock: clocks.Clock,
    cal: calendars.BusinessClock,
    now: datetime,
    registry: calendars.Registry | None = None,
) -> list[Term]:
    """Every term of the clock, oldest first, as of ``now`` (each on its own calendar, from
    ``registry``; without one, on ``cal``)."""
    every = listed(clock)
    found = []
    for i, (since, term) in enumerate(every):
        until = every[i + 1][0] if i + 1 < len(every) else None
        due = clocks.due_at(term, clocks.term_calendar(term, cal, registry))
        if until is not None:
            breached = due is not None and due < until
        elif clock.met_at is not None:
            breached = due is not None and due < clock.met_at
        else:
            breached = due is not None and due <= now
        policy = clock.recomputes[i - 1].policy if i else None
        found.append(Term(since, until, due, term.budget.describe(), policy, breached))
    return found


def deadline_at(
    clock: clocks.Clock,
    cal: calendars.BusinessClock,
    at: datetime,
    registry: calendars.Registry | None = None,
) -> datetime | None:
    """The deadline in force at ``at`` (None before the clock started or while paused)."""
    if at < clock.started_at:
        return None
    current = None
    for since, term in listed(clock):
        if since <= at:
            current = term
    if current is None:
        return None
    return clocks.due_at(current, clocks.term_calendar(current, cal, registry))
