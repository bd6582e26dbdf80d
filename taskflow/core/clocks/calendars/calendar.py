"""``Calendar``: business-time arithmetic over compiled working intervals.

Every operation turns its datetimes into UTC microseconds, binary-searches
sorted arrays of interval starts, ends and cumulative working time, and turns
the answer back into a datetime in the calendar's zone. The arrays are built
lazily for the years a computation reaches and grow on demand, so a 400-hour
budget costs the same as a one-minute one.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from taskflow.core.clocks.calendars import errors, explain, model, timeline, versions

EPOCH = timeline.EPOCH
ONE_US = timeline.ONE_US
#: Local years a calendar can compute in.
MIN_YEAR = 1900
MAX_YEAR = 2299
#: How far ahead ``add`` and ``next_*`` search before giving up (years).
SEARCH_YEARS = 100
MAX_BUDGET = timedelta(days=365 * SEARCH_YEARS)
_ZERO = timedelta(0)
#: Years compiled at least per growth step.
_STEP_YEARS = 4


class _Compiled:
    """Arrays for local years ``first <= y < stop``, valid on ``[lo, hi)`` (µs).

    The hot paths use the same arrays as ``timedelta`` offsets from the epoch
    (``d*``): subtracting the epoch from an aware datetime already gives one,
    timedelta comparisons and sums are exact integer microseconds in C, and
    skipping the int conversions halves the cost of ``add`` and ``elapsed``.
    """

    __slots__ = (
        "cend",
        "cum",
        "dcend",
        "dcum",
        "dends",
        "dhi",
        "dlo",
        "dstarts",
        "dtotal",
        "ends",
        "first",
        "hi",
        "lo",
        "n",
        "starts",
        "stop",
        "total",
    )

    def __init__(
        self, first: int, stop: int, lo: int, hi: int, starts: list[int], ends: list[int]
    ) -> None:
        self.first = first
        self.stop = stop
        self.lo = lo
        self.hi = hi
        self.starts = starts
        self.ends = ends
        self.n = len(ends)
        # cum[i]: working µs before interval i; cend[i]: working µs at its end.
        cum: list[int] = []
        cend: list[int] = []
        total = 0
        for opens, closes in zip(starts, ends, strict=True):
            cum.append(total)
            total += closes - opens
            cend.append(total)
        self.cum = cum
        self.cend = cend
        self.total = total
        self.dstarts = [timedelta(0, 0, x) for x in starts]
        self.dends = [timedelta(0, 0, x) for x in ends]
        self.dcum = [timedelta(0, 0, x) for x in cum]
        self.dcend = [timedelta(0, 0, x) for x in cend]
        self.dtotal = timedelta(0, 0, total)
        self.dlo = timedelta(0, 0, lo)
        self.dhi = timedelta(0, 0, hi)


_EMPTY = _Compiled(0, 0, 0, 0, [], [])


def _year(us: int) -> int:
    try:
        return (EPOCH + timedelta(microseconds=us)).year
    except OverflowError:
        # Beyond datetime's years 1..9999: far outside the range, refused by ``_span``.
        return 0 if us < 0 else 10000


class Calendar:
    """A business-hours calendar in one IANA zone (from ``load``, ``load_folder``, ``from_dict``).

    Conventions: windows are half-open ``[open, close)`` in local wall time,
    durations are measured on the absolute time line, a budget ending exactly at
    a close is due at that close, a start outside working time accrues from the
    next opening, ``add(start, 0) == start``, microseconds are kept, and results
    are in the calendar's zone. See docs/calendars.md.
    """

    def __init__(self, spec: model.CalendarSpec, later: tuple[versions.Version, ...] = ()) -> None:
        """``spec`` in force since always; ``later`` versions change it from their instants."""
        if not any(v.spec.has_working_time for v in later) and not spec.has_working_time:
            raise errors.NoWorkingTime(
                f"calendar {spec.name!r} ({spec.source or 'no file'}) has no working time: "
                'give at least one weekday a window under [week], e.g. mon-fri = ["09:00-17:00"].',
                calendar=spec.name,
            )
        self.spec = spec
        self.name = spec.name
        self.tz = ZoneInfo(spec.timezone)
        self._versions = (versions.Version(None, spec, "", spec.description), *later)
        self._pieces = tuple((v.effective_us, v.spec) for v in self._versions)
        self._compiled = _EMPTY
        self._lock = threading.Lock()

    @classmethod
    def of(cls, found: tuple[versions.Version, ...]) -> Calendar:
        """The calendar of an effective-dated definition (the first version since always)."""
        return cls(found[0].spec, found[1:])

    @property
    def versions(self) -> tuple[versions.Version, ...]:
        """Its definitions in order, each with the instant it takes effect (first: ``None``)."""
        return self._versions

    def spec_on(self, day: date) -> model.CalendarSpec:
        """The definition in force at the start of local date ``day``."""
        at = datetime(day.year, day.month, day.day, tzinfo=self.tz)
        return versions.in_force(self._versions, at).spec

    def __repr__(self) -> str:
        return f"<Calendar {self.name} {self.spec.timezone}>"

    # --- the hot path -------------------------------------------------------

    def add(self, start: datetime, budget: timedelta) -> datetime:
        """The instant at which ``budget`` of working time has accrued from ``start``."""
        try:
            t = start - EPOCH
        except TypeError:
            raise errors.NaiveDatetime("start", start) from None
        if budget <= _ZERO or budget > MAX_BUDGET:
            if budget == _ZERO:
                return start.astimezone(self.tz)
            raise self._bad_budget(budget)
        c = self._compiled
        if c.dlo <= t < c.dhi:
            i = bisect_right(c.dends, t)
            if i < c.n:
                s = c.dstarts[i]
                target = c.dcum[i] + (t - s if t > s else _ZERO) + budget
                if target <= c.dtotal:
                    j = bisect_left(c.dcend, target, i)
                    return (EPOCH + (c.dstarts[j] + (target - c.dcum[j]))).astimezone(self.tz)
        return self._add_slow(t // ONE_US, budget // ONE_US, budget)

    def _add_slow(self, t: int, b: int, budget: timedelta) -> datetime:
        """``add`` when the compiled span must first grow to cover the answer."""
        c = self._compiled
        if not c.lo <= t < c.hi:
            c = self._cover(t, t)
        while True:
            i = bisect_right(c.ends, t)
            if i < c.n:
                s = c.starts[i]
                target = c.cum[i] + (t - s if t > s else 0) + b
                if target <= c.total:
                    j = bisect_left(c.cend, target, i)
                    return self._dt(c.starts[j] + target - c.cum[j])
            c = self._grow(t, budget)

    def elapsed(self, start: datetime, end: datetime) -> timedelta:
        """Working time between two instants; zero when ``end <= start``."""
        try:
            t0 = start - EPOCH
            t1 = end - EPOCH
        except TypeError:
            naive = "start" if start.utcoffset() is None else "end"
            raise errors.NaiveDatetime(naive, start if naive == "start" else end) from None
        if t1 <= t0:
            return _ZERO
        c = self._compiled
        if not (c.dlo <= t0 and t1 < c.dhi):
            c = self._cover(t0 // ONE_US, t1 // ONE_US)
        ends = c.dends
        i = bisect_right(ends, t0)
        if i == c.n:
            return _ZERO
        starts = c.dstarts
        cum = c.dcum
        s = starts[i]
        a = cum[i] + (t0 - s if t0 > s else _ZERO)
        j = bisect_right(ends, t1, i)
        if j == c.n:
            return c.dtotal - a
        s = starts[j]
        return cum[j] + (t1 - s if t1 > s else _ZERO) - a

    # --- point queries ------------------------------------------------------

    def _point(self, t: datetime) -> tuple[int, _Compiled]:
        """``t`` in microseconds, and compiled windows that cover it."""
        us = self._us("t", t)
        c = self._compiled
        return us, c if c.lo <= us < c.hi else self._cover(us, us)

    def is_open(self, t: datetime) -> bool:
        """True when ``t`` is inside a working window (windows are ``[open, close)``)."""
        us, c = self._point(t)
        i = bisect_right(c.ends, us)
        return i < c.n and c.starts[i] <= us

    def next_open(self, t: datetime) -> datetime:
        """The first instant at or after ``t`` when the calendar is open (``t`` itself if open)."""
        us, c = self._point(t)
        while True:
            i = bisect_right(c.ends, us)
            if i < len(c.ends):
                return self._dt(max(us, c.starts[i]))
            c = self._grow(us, None)

    def next_close(self, t: datetime) -> datetime:
        """The end of the window containing ``t``, or of the next window if closed at ``t``."""
        us, c = self._point(t)
        while True:
            i = bisect_right(c.ends, us)
            # A window cut at the compiled horizon may go on: look further.
            if i < len(c.ends) and c.ends[i] < c.hi:
                return self._dt(c.ends[i])
            try:
                c = self._grow(us, None)
            except errors.NoWorkingTime:
                raise errors.NeverCloses(
                    f"calendar {self.name!r} is open for the next {SEARCH_YEARS} years "
                    f"from {t.isoformat()}: it has no next close.",
                    calendar=self.name,
                ) from None

    def explain(self, start: datetime, budget: timedelta) -> explain.Explanation:
        """``add(start, budget)`` with the windows consumed and the days skipped."""
        due = self.add(start, budget)
        t0 = self._us("start", start)
        t1 = self._us("due", due)
        c = self._compiled
        if not (c.lo <= t0 and t1 < c.hi):
            c = self._cover(t0, t1)
        parts: list[explain.Consumed] = []
        count = 0
        i = bisect_right(c.ends, t0)
        while t1 > t0 and i < len(c.ends) and c.starts[i] < t1:
            count += 1
            if len(parts) < explain.MAX_LISTED:
                opens = max(c.starts[i], t0)
                closes = min(c.ends[i], t1)
                parts.append(explain.Consumed(self._dt(opens), self._dt(closes)))
            i += 1
        first = start.astimezone(self.tz).date()
        last = due.date()
        skipped: list[explain.Skipped] = []
        rules: dict[int, model.YearRules] = {}  # per definition in force, computed once
        day = first
        while day <= last and len(skipped) < explain.MAX_LISTED:
            spec = self.spec_on(day)
            if id(spec) not in rules:
                rules[id(spec)] = timeline.year_rules(spec, first.year, last.year)
            plan = model.plan_day(spec, rules[id(spec)], day)
            if plan.kind in ("holiday", "closure", "short", "weekend"):
                skipped.append(explain.Skipped(day, plan.kind or "", plan.reason))
            day += timedelta(days=1)
        return explain.Explanation(
            calendar=self.name,
            start=start.astimezone(self.tz),
            budget=budget,
            due=due,
            windows=tuple(parts),
            skipped=tuple(skipped),
            unlisted=count - len(parts),
            changes=tuple(
                (v.effective.astimezone(self.tz), f"{v.description or 'new version'} ({v.key})")
                for v in self._versions[1:]
                if v.effective is not None and start < v.effective <= due
            ),
        )

    def day_plan(self, day: date) -> model.DayPlan:
        """What the calendar makes of one local date (windows, holiday, closure...)."""
        spec = self.spec_on(day)
        return model.plan_day(spec, timeline.year_rules(spec, day.year, day.year), day)

    # --- helpers ------------------------------------------------------------

    def _us(self, what: str, t: datetime) -> int:
        try:
            return (t - EPOCH) // ONE_US
        except TypeError:
            raise errors.NaiveDatetime(what, t) from None

    def _dt(self, us: int) -> datetime:
        return (EPOCH + timedelta(0, 0, us)).astimezone(self.tz)

    def _bad_budget(self, budget: timedelta) -> errors.BudgetOutOfRange:
        if budget < timedelta(0):
            return errors.BudgetOutOfRange(
                f"budget {budget} is negative: budgets count working time forward "
                "from the start; pass a duration of zero or more.",
                budget=str(budget),
            )
        return errors.BudgetOutOfRange(
            f"budget {budget} exceeds the supported {SEARCH_YEARS} years: pass a shorter budget.",
            budget=str(budget),
        )

    def _span(self, first: int, stop: int) -> tuple[int, int]:
        if first < MIN_YEAR or stop > MAX_YEAR + 1:
            raise errors.BudgetOutOfRange(
                f"calendar {self.name!r} computes between {MIN_YEAR} and {MAX_YEAR}; "
                f"this computation reaches year {first if first < MIN_YEAR else stop - 1}.",
                calendar=self.name,
            )
        return first, stop

    def _cover(self, t0: int, t1: int) -> _Compiled:
        """Compiled arrays covering both instants (growing the compiled span)."""
        first = max(_year(t0) - 1, MIN_YEAR)
        stop = min(_year(t1) + 2, MAX_YEAR + 1)
        if _year(t0) < MIN_YEAR or _year(t1) > MAX_YEAR:
            self._span(_year(t0), _year(t1) + 1)
        return self._extend(first, stop)

    def _grow(self, t: int, budget: timedelta | None) -> _Compiled:
        """Compile further ahead of ``t``, or fail once the search bound is reached."""
        c = self._compiled
        limit = min(_year(t) + SEARCH_YEARS + 1, MAX_YEAR + 1)
        if c.stop >= limit:
            i = bisect_right(c.ends, t)
            if i == len(c.ends) or budget is None:
                raise errors.NoWorkingTime(
                    f"calendar {self.name!r} has no working time in the {SEARCH_YEARS} years "
                    f"after {self._dt(t).isoformat()}.",
                    calendar=self.name,
                )
            raise errors.BudgetOutOfRange(
                f"budget {budget} from {self._dt(t).isoformat()} runs past "
                f"{c.stop} on calendar {self.name!r}: pass a shorter budget.",
                calendar=self.name,
                budget=str(budget),
            )
        step = max(_STEP_YEARS, c.stop - c.first)
        return self._extend(c.first, min(c.stop + step, limit))

    def _extend(self, first: int, stop: int) -> _Compiled:
        with self._lock:
            c = self._compiled
            if c.stop > c.first:
                if c.first <= first and stop <= c.stop:
                    return c
                first = min(first, c.first)
                stop = max(stop, c.stop)
                spans = (c.starts, c.ends)
                if first < c.first:
                    spans = timeline.join(self._compile(first, c.first), spans)
                if stop > c.stop:
                    spans = timeline.join(spans, self._compile(c.stop, stop))
            else:
                spans = self._compile(first, stop)
            lo = timeline.local_us(self.tz, date(first, 1, 1), 0)
            hi = timeline.local_us(self.tz, date(stop, 1, 1), 0)
            c = _Compiled(first, stop, lo, hi, spans[0], spans[1])
            self._compiled = c
            return c

    def intervals(self, first: int, stop: int) -> tuple[list[int], list[int]]:
        """Working intervals (starts, ends in µs) of local years ``[first, stop)``, every
        version on its own span: what ``add`` and ``elapsed`` search (and SQL materialises)."""
        return timeline.compile_pieces(self._pieces, self.tz, first, stop)

    _compile = intervals
