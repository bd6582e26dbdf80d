"""What a calendar file says, as immutable values, and what it makes of one local date.

Times of day are whole seconds after local midnight. A window belongs to the date
it opens on; its close may pass midnight (up to 48:00), so ``22:00-06:00`` is
``Window(79200, 108000)``.
"""

from __future__ import annotations

import calendar as _stdcal
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

DAY = 86_400
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAYS_LONG = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")

#: ``remove-date``: a holiday removes its whole local date, including the part
#: after midnight of the previous evening's overnight shift. ``cancel-shift``:
#: a holiday cancels the shifts that start on it, wherever they end.
HolidayMode = Literal["remove-date", "cancel-shift"]
HOLIDAY_MODES: tuple[HolidayMode, ...] = ("remove-date", "cancel-shift")


def clock(seconds: int) -> str:
    """``HH:MM`` (or ``HH:MM:SS``) for seconds after midnight; may exceed 24:00."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


@dataclass(frozen=True, order=True)
class Window:
    """A local wall-clock working window ``[open, close)`` on the date it opens."""

    open: int
    close: int

    def __str__(self) -> str:
        close = self.close - DAY if self.close > DAY else self.close
        return f"{clock(self.open)}-{clock(close)}"


@dataclass(frozen=True)
class DateRule:
    """Which dates a special day applies to: one date, or a yearly rule."""

    on: date | None = None
    month: int | None = None
    day: int | None = None
    weekday: int | None = None
    #: 1..5 for the first..fifth, -1 for the last such weekday of the month.
    nth: int | None = None
    offset_days: int = 0

    def dates(self, year: int) -> list[date]:
        """The dates this rule selects whose *rule year* is ``year`` (offsets may cross it)."""
        if self.on is not None:
            return [self.on] if self.on.year == year else []
        assert self.month is not None
        if self.day is not None:
            if self.day > _stdcal.monthrange(year, self.month)[1]:
                return []  # 29 February in a common year
            base = date(year, self.month, self.day)
        else:
            assert self.weekday is not None
            assert self.nth is not None
            found = _nth_weekday(year, self.month, self.weekday, self.nth)
            if found is None:
                return []
            base = found
        return [base + timedelta(days=self.offset_days)]

    def __str__(self) -> str:
        if self.on is not None:
            return self.on.isoformat()
        if self.day is not None:
            text = f"every {self.day} {_stdcal.month_name[self.month or 1]}"
        else:
            nth = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 5: "5th", -1: "last"}[self.nth or 1]
            text = f"{nth} {WEEKDAYS[self.weekday or 0]} of {_stdcal.month_name[self.month or 1]}"
        if self.offset_days:
            text += f" {self.offset_days:+d} day(s)"
        return text


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date | None:
    last = _stdcal.monthrange(year, month)[1]
    if nth > 0:
        first = date(year, month, 1)
        day = 1 + (weekday - first.weekday()) % 7 + 7 * (nth - 1)
        return date(year, month, day) if day <= last else None
    end = date(year, month, last)
    return end - timedelta(days=(end.weekday() - weekday) % 7)


@dataclass(frozen=True)
class Closure:
    """A closed date, or a date with shorter hours (``hours``, ``closes_at`` or ``closed``)."""

    when: DateRule
    reason: str
    #: Replaces the day's windows when set.
    hours: tuple[Window, ...] | None = None
    #: Cuts the day's windows at this wall time when set (a half day).
    closes_at: int | None = None
    #: Closes just these wall-clock seconds ``[from, to)`` of the date's own windows (a
    #: timed ICS event inside one day): the hours around them stay worked.
    closed: tuple[int, int] | None = None

    @property
    def whole_day(self) -> bool:
        return self.hours is None and self.closes_at is None and self.closed is None


@dataclass(frozen=True)
class WorkingDay:
    """An extra worked date (a Saturday that is worked); wins over weekends and holidays."""

    when: DateRule
    hours: tuple[Window, ...]
    reason: str


@dataclass(frozen=True)
class HolidaySource:
    """Public holidays from the ``holidays`` package."""

    country: str
    subdivision: str | None = None
    categories: tuple[str, ...] | None = None
    #: Holiday names this calendar does not observe.
    ignore: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CalendarSpec:
    """A fully resolved calendar definition (inheritance already applied)."""

    name: str
    timezone: str
    week: tuple[tuple[Window, ...], ...]
    holidays: HolidaySource | None = None
    holiday_mode: HolidayMode = "remove-date"
    closures: tuple[Closure, ...] = ()
    working_days: tuple[WorkingDay, ...] = ()
    description: str = ""
    source: str = ""
    inherits: str | None = None

    @property
    def has_working_time(self) -> bool:
        """False when no date could ever have a window."""
        return any(self.week) or any(w.hours for w in self.working_days)


@dataclass(frozen=True)
class DayPlan:
    """What one local date contributes: the windows opening on it, and why."""

    windows: tuple[Window, ...]
    #: True when the whole local date is removed (``remove-date`` holiday or closure).
    blackout: bool = False
    #: ``None`` for an ordinary day, else ``holiday``, ``closure``, ``short``,
    #: ``working-day`` or ``weekend`` (no windows in the weekly pattern).
    kind: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class YearRules:
    """Special dates of a span of years, indexed by date."""

    holidays: Mapping[date, str] = field(default_factory=dict)
    closures: Mapping[date, tuple[Closure, ...]] = field(default_factory=dict)
    working: Mapping[date, WorkingDay] = field(default_factory=dict)


def without(windows: tuple[Window, ...], start: int, end: int) -> tuple[Window, ...]:
    """``windows`` with ``[start, end)`` taken out (a window around it splits in two)."""
    out = []
    for w in windows:
        if w.open < start:
            out.append(Window(w.open, min(w.close, start)))
        if w.close > end:
            out.append(Window(max(w.open, end), w.close))
    return tuple(out)


def plan_day(spec: CalendarSpec, rules: YearRules, day: date) -> DayPlan:
    """The windows that open on ``day`` and whether the date is blacked out.

    Precedence (documented in docs/calendars.md): an extra working day wins over
    everything; then a holiday or whole-day closure closes the date; then
    shorter hours (``hours`` replaces, ``closes_at`` cuts) apply to the weekly windows.
    """
    worked = rules.working.get(day)
    if worked is not None:
        return DayPlan(worked.hours, kind="working-day", reason=worked.reason)
    windows = spec.week[day.weekday()]
    holiday = rules.holidays.get(day)
    closures = rules.closures.get(day, ())
    closed_by: tuple[str, str] | None = None
    if holiday is not None:
        closed_by = ("holiday", holiday)
    else:
        for closure in closures:
            if closure.whole_day:
                closed_by = ("closure", closure.reason)
                break
    if closed_by is not None:
        if spec.holiday_mode == "cancel-shift":
            return DayPlan((), kind=closed_by[0], reason=closed_by[1])
        return DayPlan(windows, blackout=True, kind=closed_by[0], reason=closed_by[1])
    if not closures:
        return DayPlan(windows, kind=None if windows else "weekend")
    if not windows and all(closure.hours is None for closure in closures):
        return DayPlan((), kind="weekend")  # a half day that falls on a closed weekday
    reasons = []
    for closure in closures:
        if closure.hours is not None:
            windows = closure.hours
        elif closure.closes_at is not None:
            cut = closure.closes_at
            windows = tuple(Window(w.open, min(w.close, cut)) for w in windows if w.open < cut)
        elif closure.closed is not None:
            windows = without(windows, *closure.closed)
        reasons.append(closure.reason)
    return DayPlan(windows, kind="short", reason="; ".join(reasons))
