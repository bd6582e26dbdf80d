"""SLA milestone clocks as ledgers: what happened, and what follows from it at ``now``.

A clock stores only facts: its milestone, its budget (as resolved for the
subject), the instant it started, the intervals it stood paused, and the
instant it was met. Everything a screen shows (due instant, elapsed and
remaining business time, status, when it breached) is derived from those facts
on the clock's calendar at a given ``now``. Nothing here reads the time.

Why a ledger and not a stored due instant: pauses, budget recomputes and
"remaining" all subtract business time; with the facts kept, a recompute keeps
the time already spent by construction (the start and the pauses do not move,
only the budget does), and the due instant can be explained window by window.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Final, cast

from taskflow.core.clocks import calendars
from taskflow.core.clocks import pauses as ledger
from taskflow.core.clocks.pauses import Pause as Pause
from taskflow.core.common import durations
from taskflow.core.definition import budgets as bu

RUNNING, PAUSED, MET, AT_RISK, BREACHED = "running", "paused", "met", "at_risk", "breached"
#: What a budget change mid-run does to the clock (docs/sla.md, "Recompute policies").
KEEP_ELAPSED, RESTART, RETROACTIVE = bu.KEEP_ELAPSED, bu.RESTART, bu.RETROACTIVE
#: Share of the budget past which a running clock is ``at_risk`` (unless told otherwise).
DEFAULT_AT_RISK: Final = 0.75
_ZERO: Final = timedelta(0)


@dataclass(frozen=True)
class Recompute:
    """The budget changed at ``at`` under ``policy``; ``before`` is the budget it replaced."""

    at: datetime
    policy: str
    before: bu.ResolvedBudget


@dataclass(frozen=True)
class Clock:
    """One milestone clock of one slot (see the module docs).

    ``recomputes`` is the history of budget changes, oldest first: with it the
    deadline in force at any instant can be derived again (``recompute.terms``).
    """

    milestone: str
    budget: bu.ResolvedBudget
    started_at: datetime
    pauses: tuple[Pause, ...] = ()
    met_at: datetime | None = None
    recomputes: tuple[Recompute, ...] = ()

    @property
    def origin(self) -> datetime:
        """Where elapsed time is counted from: the start, or the last ``restart``."""
        restarts = [r.at for r in self.recomputes if r.policy == RESTART]
        return restarts[-1] if restarts else self.started_at

    @property
    def floor(self) -> datetime | None:
        """No instant of the current term comes before this (a ``keep-elapsed`` change)."""
        last = self.recomputes[-1] if self.recomputes else None
        return last.at if last is not None and last.policy == KEEP_ELAPSED else None

    @property
    def paused(self) -> bool:
        """True while the clock stands still until someone resumes it (a pause with no end;
        a holder's leave ahead may follow it)."""
        return any(p.end is None for p in self.pauses)

    def paused_at(self, now: datetime) -> bool:
        """True when the clock stands still at ``now`` (resumed by hand, or a leave's end)."""
        return any(p.start <= now and (p.end is None or now < p.end) for p in self.pauses)

    @property
    def calendar(self) -> str | None:
        """The calendar it accrues on; None for real time."""
        return self.budget.calendar if self.budget.kind == "business" else None


# -- changing the ledger -----------------------------------------------------------------------


def start(milestone: str, budget: bu.ResolvedBudget, now: datetime) -> Clock:
    """A clock that starts running at ``now``."""
    return Clock(milestone, budget, now)


def pause(clock: Clock, now: datetime) -> Clock:
    """Stand the clock still from ``now`` (no change when met or already paused)."""
    if clock.met_at is not None or clock.paused:
        return clock
    return dataclasses.replace(clock, pauses=ledger.ordered((*clock.pauses, Pause(now))))


def resume(clock: Clock, now: datetime) -> Clock:
    """Let a paused clock run again from ``now`` (a holder's leave ahead stays ahead)."""
    if not clock.paused:
        return clock
    ended = (Pause(p.start, now) if p.end is None else p for p in clock.pauses)
    return dataclasses.replace(clock, pauses=ledger.ordered(ended))


def meet(clock: Clock, now: datetime) -> Clock:
    """The milestone was reached at ``now`` (a paused clock's pause ends there too)."""
    if clock.met_at is not None:
        return clock
    resumed = resume(clock, now)
    return dataclasses.replace(resumed, pauses=ledger.until(resumed.pauses, now), met_at=now)


def rebudget(
    clock: Clock, budget: bu.ResolvedBudget, now: datetime, policy: str = KEEP_ELAPSED
) -> Clock:
    """The clock on a new budget from ``now`` under ``policy`` (docs/sla.md, "Recompute
    policies"): ``keep-elapsed`` keeps the time spent and never dates the new deadline
    before ``now``; ``restart`` counts from ``now`` again; ``retroactive`` judges the new
    budget from the start. A met clock, or the same budget, is left as it is."""
    if clock.met_at is not None or budget == clock.budget:
        return clock
    change = Recompute(now, policy, clock.budget)
    return dataclasses.replace(clock, budget=budget, recomputes=(*clock.recomputes, change))


def term(clock: Clock, i: int) -> tuple[datetime, Clock]:
    """The ``i``-th budget the clock ran on (0: the first): the instant it came into force
    and the clock as it stood then (its due instant is the deadline in force from that
    instant until the next term's)."""
    changes = clock.recomputes
    since = clock.started_at if i == 0 else changes[i - 1].at
    budget = changes[i].before if i < len(changes) else clock.budget
    return since, dataclasses.replace(clock, budget=budget, recomputes=changes[:i])


def term_calendar(
    term_clock: Clock, cal: calendars.BusinessClock, registry: calendars.Registry | None
) -> calendars.BusinessClock:
    """The calendar a term ran on: ``cal`` (the clock's own now) unless the term's budget
    named another, found in ``registry`` (without one, ``cal``)."""
    if registry is None or term_clock.calendar == getattr(cal, "name", None):
        return cal
    return calendar_of(registry, term_clock)


def generation(clock: Clock) -> int:
    """How many recomputes started the clock's breach timers afresh (``restart`` and
    ``retroactive`` ones): the generation its current term belongs to."""
    return sum(r.policy in (RESTART, RETROACTIVE) for r in clock.recomputes)


def recorded_breach(
    clock: Clock, cal: calendars.BusinessClock, registry: calendars.Registry | None = None
) -> datetime | None:
    """The first deadline that passed while it was in force, among the terms a later
    recompute ended, each on its own calendar (``registry``). A ``retroactive`` recompute
    judges again from the start: the terms before it no longer count (its own deadline may
    lie before it: a breach back-dated)."""
    found = generation_breaches(clock, cal, registry)
    return min(found.values()) if found else None


def generation_breaches(
    clock: Clock, cal: calendars.BusinessClock, registry: calendars.Registry | None = None
) -> dict[int, datetime]:
    """:func:`recorded_breach` by :func:`generation`: the first breach on record among each
    generation's ended terms (a breach timer per generation fires it)."""
    if not clock.recomputes:
        return {}
    # Calendars and registries hash by identity.
    return _generation_breaches(clock, cast(Hashable, cal), cast(Hashable, registry))


@lru_cache(maxsize=4096)
def _generation_breaches(clock: Clock, cal: Any, registry: Any) -> dict[int, datetime]:
    # Cached: a closed term's verdict never changes (a later pause starts after its end), and
    # one write asks it of the same ledger several times (lines, rows, timers, report copy).
    changes = clock.recomputes
    first = max((i for i, r in enumerate(changes, start=1) if r.policy == RETROACTIVE), default=0)
    found: dict[int, datetime] = {}
    for i in range(first, len(changes)):
        gen = sum(r.policy in (RESTART, RETROACTIVE) for r in changes[:i])
        ran = term(clock, i)[1]
        due = due_at(ran, term_calendar(ran, cal, registry))
        if gen not in found and due is not None and due < changes[i].at:
            found[gen] = due
    return found


# -- the calendar a clock runs on ----------------------------------------------------------------


def calendar_of(registry: calendars.Registry, clock: Clock) -> calendars.BusinessClock:
    """The calendar the clock accrues on (plain UTC time for real budgets)."""
    name = clock.calendar
    return calendars.REAL_TIME if name is None else registry.get(name)


@lru_cache(maxsize=256)
def _day_length(spec: calendars.CalendarSpec) -> timedelta:
    lengths = [sum(w.close - w.open for w in day) for day in spec.week]
    working = Counter(n for n in lengths if n > 0)
    if not working:
        return bu.DEFAULT_DAY_LENGTH
    # Most common length; among equally common ones the longest (a stable, documented choice).
    seconds = max(working.items(), key=lambda item: (item[1], item[0]))[0]
    return timedelta(seconds=seconds)


def day_length(cal: calendars.BusinessClock) -> timedelta:
    """The calendar's working-day length: its most common working day (24 h for real time).

    ``business.days(n)`` means ``n`` of these (see :mod:`taskflow.core.definition.budgets`).
    """
    spec = getattr(cal, "spec", None)
    if not isinstance(spec, calendars.CalendarSpec):
        return timedelta(hours=24)
    return _day_length(spec)


def budget_time(clock: Clock, cal: calendars.BusinessClock) -> timedelta:
    """The whole budget as business time on ``cal``."""
    return clock.budget.business_time(day_length(cal))


# -- what follows from the ledger ---------------------------------------------------------------


def _end(clock: Clock, now: datetime) -> datetime:
    return min(now, clock.met_at) if clock.met_at is not None else now


def elapsed(clock: Clock, cal: calendars.BusinessClock, now: datetime) -> timedelta:
    """Business time accrued from the start to ``now`` (or the met instant), minus pauses."""
    end, origin = _end(clock, now), clock.origin
    if end <= origin:
        return _ZERO
    total = cal.elapsed(origin, end)
    for p in ledger.ordered(clock.pauses, whole=True):
        lo, hi = max(p.start, origin), min(p.end or end, end)
        if hi > lo:
            total -= cal.elapsed(lo, hi)
    return max(total, _ZERO)


def _legs(
    clock: Clock, cal: calendars.BusinessClock, amount: timedelta
) -> Iterator[tuple[datetime, timedelta, Pause | None]]:
    """The walk from the start to where ``amount`` of business time has run: each leg is
    where it starts, the business time it takes, and the pause that ends it (None for the
    last leg, which ends where the amount runs out; a pause still open ends the walk)."""
    t, left = clock.origin, amount
    for p in clock.pauses:
        if p.start < t:
            # A pause under way when a restart set the origin holds the walk until it ends.
            if p.end is None:
                yield t, _ZERO, p
                return
            t = max(t, p.end)
            continue
        if cal.add(t, left) <= p.start:
            break
        used = cal.elapsed(t, p.start)
        left -= used
        yield t, used, p
        if p.end is None:
            return
        t = p.end
    yield t, left, None


def instant_at(clock: Clock, cal: calendars.BusinessClock, amount: timedelta) -> datetime | None:
    """When the clock's elapsed time reaches ``amount``; None while a pause holds it short.

    The walk adds business time from the start, and every time a pause comes
    first it takes what accrued up to the pause and carries on from its end.
    """
    *_, (t, used, pause) = _legs(clock, cal, amount)
    if pause is not None:
        return None
    found, floor = cal.add(t, used), clock.floor
    return found if floor is None or found >= floor else floor


def due_at(clock: Clock, cal: calendars.BusinessClock) -> datetime | None:
    """The due instant: where the budget runs out (None while paused short of it)."""
    if not clock.pauses and not clock.recomputes:
        return instant_at(clock, cal, budget_time(clock, cal))
    return _due_at(clock, cast(Hashable, cal))


@lru_cache(maxsize=4096)
def _due_at(clock: Clock, cal: Any) -> datetime | None:
    # Cached for ledgers with pauses or recomputes: their walk steps over each, and one
    # decision asks the same ledger's due instant for its lines, its rows and its timers.
    return instant_at(clock, cal, budget_time(clock, cal))


def breached_at(
    clock: Clock,
    cal: calendars.BusinessClock,
    now: datetime,
    registry: calendars.Registry | None = None,
) -> datetime | None:
    """The due instant, if it passed before the clock was met (or before ``now``); after a
    recompute, the first deadline that passed while it was in force (``recorded_breach``)."""
    recorded = recorded_breach(clock, cal, registry)
    if recorded is not None:
        return recorded
    due = due_at(clock, cal)
    if due is None:
        return None
    if clock.met_at is not None:
        return due if due < clock.met_at else None
    return due if due <= now else None


def remaining(clock: Clock, cal: calendars.BusinessClock, now: datetime) -> timedelta:
    """Business time left before the budget runs out (zero once it has)."""
    return max(budget_time(clock, cal) - elapsed(clock, cal, now), _ZERO)


def status(
    clock: Clock,
    cal: calendars.BusinessClock,
    now: datetime,
    at_risk: float = DEFAULT_AT_RISK,
    registry: calendars.Registry | None = None,
) -> str:
    """``met``, ``paused``, ``breached``, ``at_risk`` (past that share) or ``running``."""
    if clock.met_at is not None:
        return MET
    if clock.paused_at(now):
        return PAUSED
    spent, whole = elapsed(clock, cal, now), budget_time(clock, cal)
    if spent >= whole or breached_at(clock, cal, now, registry) is not None:
        return BREACHED
    if spent >= whole * at_risk:
        return AT_RISK
    return RUNNING


def explain(clock: Clock, cal: calendars.BusinessClock) -> list[str]:
    """The calendar walk behind :func:`due_at`, one line per item, pauses included."""
    whole = budget_time(clock, cal)
    lines = [f"{clock.milestone} budget {clock.budget.describe()} = {duration(whole)}"]
    for r in clock.recomputes:
        lines.append(f"{r.policy} at {r.at.isoformat()}: was {r.before.describe()}")
    left = whole
    for t, used, p in _legs(clock, cal, whole):
        lines += cal.explain(t, used).lines()
        left -= used
        if p is not None:
            lines.append(
                f"paused since {p.start.isoformat()}: {duration(left)} left"
                if p.end is None
                else f"paused {p.start.isoformat()} -> {p.end.isoformat()}"
            )
    floor = clock.floor
    if floor is not None and due_at(clock, cal) == floor:
        lines.append(f"already spent at the {KEEP_ELAPSED} recompute: due {floor.isoformat()}")
    return lines


def duration(value: timedelta) -> str:
    """``3h 20m`` style text for a non-negative duration (days of 24 h shown as such)."""
    seconds = max(int(value.total_seconds()), 0)
    return durations.words(seconds, seconds_with_hours=True, zero="0m")


def human(value: timedelta, clock: Clock) -> str:
    """``3h 20m business time`` or ``3h 20m real time``: the kinds are never mixed."""
    kind = "real time" if clock.calendar is None else "business time"
    return f"{duration(value)} {kind}"


def nearest_due(clocks: tuple[Clock, ...], registry: calendars.Registry) -> datetime | None:
    """The nearest due instant among clocks still running (the inbox orders by it)."""
    found = [
        d
        for c in clocks
        if c.met_at is None and not c.paused
        for d in [due_at(c, calendar_of(registry, c))]
        if d is not None
    ]
    return min(found) if found else None
