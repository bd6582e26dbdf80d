"""Business-time arithmetic: taskflow against the peers a user would otherwise pick.

    pip install -e '.[bench]' && python bench/calendar.py [--cases N] [--seed S]

The same seeded random cases (starts inside and outside hours, on holidays,
exactly on openings and closings, within a day of DST changes; budgets from one
minute to 400 hours, some landing exactly on a closing) run through taskflow and
through each peer in one process. Every implementation is called with aware
datetimes and must answer aware datetimes, so a peer that works on naive wall
times pays for the conversion, as its user would. Prints µs per call (median,
p99), the ratio to taskflow, and disagreements with taskflow by class; the
classes are explained in bench/README.md.
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from datetime import time as wall
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

# This file is named calendar.py: run as a script, its folder would come first on
# sys.path and shadow the standard library's calendar module (which holidays and
# taskflow import). Drop the folder, and make the repository importable instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskflow.core.clocks import calendars  # noqa: E402
from taskflow.core.clocks.calendars import model, timeline, versions  # noqa: E402
from taskflow.service.clocks import calendar_files  # noqa: E402

CALENDARS = ("24x7", "uk-london", "us-new-york", "de-berlin", "in-bengaluru", "support-overnight")
FIRST, LAST = date(2024, 1, 1), date(2030, 12, 31)
#: Years peers get holidays and compiled timelines for (covers every case and answer).
PEER_YEARS = range(2022, 2034)
MAX_BUDGET_MIN = 400 * 60


@dataclass(frozen=True)
class Case:
    """One input: ``add(start, budget)`` and ``elapsed(start, end)`` on ``calendar``."""

    calendar: str
    kind: str
    start: datetime
    budget: timedelta
    end: datetime


# --- cases ---------------------------------------------------------------------


def _random_instant(rng: random.Random, tz: ZoneInfo) -> datetime:
    day = FIRST + timedelta(days=rng.randrange((LAST - FIRST).days))
    local = datetime(day.year, day.month, day.day, tzinfo=tz)
    return (local.astimezone(UTC) + timedelta(minutes=rng.randrange(24 * 60))).astimezone(tz)


def _dst_changes(tz: ZoneInfo) -> list[datetime]:
    """Instants (UTC, whole minutes) where ``tz`` changes offset between FIRST and LAST."""
    out = []
    t = datetime(FIRST.year, 1, 1, tzinfo=UTC)
    stop = datetime(LAST.year + 1, 1, 1, tzinfo=UTC)
    step = timedelta(hours=6)
    minute = timedelta(minutes=1)
    while t < stop:
        before = t.astimezone(tz).utcoffset()
        if before != (t + step).astimezone(tz).utcoffset():
            lo, hi = 0, 6 * 60  # minutes after t: offset unchanged at lo, changed at hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if (t + mid * minute).astimezone(tz).utcoffset() == before:
                    lo = mid
                else:
                    hi = mid
            out.append(t + hi * minute)
        t += step
    return out


def _holiday_dates(calendar: calendars.Calendar) -> list[date]:
    rules = timeline.year_rules(calendar.spec, FIRST.year, LAST.year)
    return sorted(d for d in rules.holidays if FIRST <= d <= LAST)


def _window_edge(calendar: calendars.Calendar, t: datetime, opening: bool) -> datetime:
    try:
        return calendar.next_open(t) if opening else calendar.next_close(t)
    except calendars.NeverCloses:
        return t


def _start(
    rng: random.Random, calendar: calendars.Calendar, kind: str, dst: list[datetime]
) -> datetime:
    tz = calendar.tz
    t = _random_instant(rng, tz)
    if kind == "inside":
        opens = calendar.next_open(t)
        closes = _window_edge(calendar, opens, opening=False)
        span = max(int((closes - opens) / timedelta(minutes=1)), 1)
        return (opens.astimezone(UTC) + timedelta(minutes=rng.randrange(span))).astimezone(tz)
    if kind == "outside" and calendar.is_open(t):
        closes = _window_edge(calendar, t, opening=False)
        gap = max(int((calendar.next_open(closes) - closes) / timedelta(minutes=1)), 1)
        return (closes.astimezone(UTC) + timedelta(minutes=rng.randrange(gap))).astimezone(tz)
    if kind == "holiday":
        days = _holiday_dates(calendar)
        if days:
            day = rng.choice(days)
            local = datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC)
            return (local + timedelta(minutes=rng.randrange(24 * 60))).astimezone(tz)
    if kind == "edge":
        return _window_edge(calendar, t, opening=rng.random() < 0.5)
    if kind == "dst" and dst:
        change = rng.choice(dst)
        return (change + timedelta(minutes=rng.randrange(-24 * 60, 24 * 60))).astimezone(tz)
    return t


def _budget(rng: random.Random, calendar: calendars.Calendar, start: datetime) -> timedelta:
    roll = rng.random()
    if roll < 0.15:
        # Land exactly on a closing, k windows ahead.
        closes = start
        for _ in range(rng.randrange(1, 5)):
            closes = _window_edge(calendar, calendar.next_open(closes), opening=False)
        budget = calendar.elapsed(start, closes)
        if timedelta(minutes=1) <= budget <= timedelta(minutes=MAX_BUDGET_MIN):
            return budget
    minutes = int(math.exp(rng.uniform(0, math.log(MAX_BUDGET_MIN))))
    if roll < 0.45:
        return timedelta(hours=max(1, round(minutes / 60)))  # whole hours (pandas can do these)
    return timedelta(minutes=minutes)


def _end(rng: random.Random, calendar: calendars.Calendar, start: datetime) -> datetime:
    minutes = int(math.exp(rng.uniform(0, math.log(60 * 24 * 60))))
    end = (start.astimezone(UTC) + timedelta(minutes=minutes)).astimezone(calendar.tz)
    if rng.random() < 0.2:
        end = _window_edge(calendar, end, opening=rng.random() < 0.5)
    return end


def generate(count: int, seed: int, registry: calendars.Registry) -> list[Case]:
    """``count`` seeded cases spread over the shipped calendars and the start kinds."""
    rng = random.Random(seed)
    dst = {name: _dst_changes(registry.get(name).tz) for name in CALENDARS}
    kinds = ("inside",) * 3 + ("outside",) * 2 + ("holiday", "edge", "edge", "dst", "dst")
    cases = []
    for _ in range(count):
        name = rng.choice(CALENDARS)
        calendar = registry.get(name)
        kind = rng.choice(kinds)
        start = _start(rng, calendar, kind, dst[name])
        if rng.random() < 0.1:
            start = start.astimezone(UTC)  # callers do not always pass the calendar's zone
        cases.append(
            Case(name, kind, start, _budget(rng, calendar, start), _end(rng, calendar, start))
        )
    return cases


# --- implementations -----------------------------------------------------------


AddFn = Callable[[datetime, timedelta], datetime]
ElapsedFn = Callable[[datetime, datetime], timedelta]


@dataclass
class Adapter:
    """One implementation's ``add``/``elapsed`` for one calendar (``None``: cannot)."""

    add: AddFn | None
    elapsed: ElapsedFn | None
    accepts: Callable[[Case], bool] = lambda case: True


def _groups(spec: model.CalendarSpec) -> Iterator[tuple[model.Window, list[int]]]:
    """Each distinct weekly window with the weekdays it applies to."""
    days: dict[model.Window, list[int]] = {}
    for weekday, windows in enumerate(spec.week):
        for window in windows:
            days.setdefault(window, []).append(weekday)
    yield from days.items()


def _wall(seconds: int) -> wall:
    seconds %= model.DAY
    return wall(seconds // 3600, seconds % 3600 // 60, seconds % 60)


def _peer_holidays(spec: model.CalendarSpec) -> list[date]:
    return sorted(timeline.year_rules(spec, PEER_YEARS[0], PEER_YEARS[-1]).holidays)


def _short_days(spec: model.CalendarSpec) -> list[tuple[date, int]]:
    """(date, closes_at) of every half day in the peer years."""
    out = []
    for year in PEER_YEARS:
        for closure in spec.closures:
            if closure.closes_at is not None:
                out.extend((day, closure.closes_at) for day in closure.when.dates(year))
    return out


def taskflow_adapter(calendar: calendars.Calendar) -> Adapter:
    return Adapter(calendar.add, calendar.elapsed)


def workclock_adapter(calendar: calendars.Calendar) -> Adapter | None:
    import workclock

    spec = calendar.spec
    if spec.closures or spec.working_days:
        return None  # no per-date shorter hours
    rules: list[Any] = [
        workclock.WorkDay(_wall(w.open), _wall(w.close), days=days) for w, days in _groups(spec)
    ]
    if spec.holidays:
        rules.append(workclock.Holidays(_peer_holidays(spec)))
    schedule = workclock.Schedule(rules, time_zone=calendar.tz)
    return Adapter(schedule.add, schedule.between)


def _naive(day: date) -> datetime:
    """Local midnight as a naive datetime: timegrid's convention, not ours."""
    return datetime(day.year, day.month, day.day)  # noqa: DTZ001


def timegrid_adapter(calendar: calendars.Calendar) -> Adapter | None:
    import timegrid

    spec = calendar.spec
    tz = calendar.tz
    grid = timegrid.TimeGridCalendar.create()
    days = [getattr(timegrid.DayOfWeek, name) for name in model.WEEKDAYS_LONG]
    for window, weekdays in _groups(spec):
        for weekday in weekdays:
            if window.close - window.open == model.DAY:
                # "Start and end cannot be the same time": a whole day is two halves.
                middle = window.open + model.DAY // 2
                grid.add_open_rule(days[weekday], _wall(window.open), _wall(middle))
                grid.add_open_rule(days[weekday], _wall(middle), _wall(window.close))
            else:
                grid.add_open_rule(days[weekday], _wall(window.open), _wall(window.close))
    for day in _peer_holidays(spec) if spec.holidays else ():
        grid.add_holiday(day)
    for day, closes_at in _short_days(spec):
        midnight = _naive(day)
        grid.add_closed_window(
            midnight + timedelta(seconds=closes_at), midnight + timedelta(days=1)
        )
    compiled = grid.compile(
        _naive(date(PEER_YEARS[0], 1, 1)), _naive(date(PEER_YEARS[-1] + 1, 1, 1))
    )

    # timegrid takes naive wall times: convert in and out, as its user must.
    def add(start: datetime, budget: timedelta) -> datetime:
        due = grid.add_work_duration(start.astimezone(tz).replace(tzinfo=None), budget)
        return due.replace(tzinfo=tz)

    def elapsed(start: datetime, end: datetime) -> timedelta:
        return compiled.get_working_duration(  # type: ignore[no-any-return]
            start.astimezone(tz).replace(tzinfo=None), end.astimezone(tz).replace(tzinfo=None)
        )

    return Adapter(add, elapsed)


def businesstimedelta_adapter(calendar: calendars.Calendar) -> Adapter | None:
    import businesstimedelta as btd
    import pytz

    spec = calendar.spec
    if spec.closures or any(w.close - w.open == model.DAY for w, _ in _groups(spec)):
        return None  # no half days; a 24-hour window (start == end) never advances
    tz = pytz.timezone(spec.timezone)
    rules: list[Any] = [
        btd.WorkDayRule(start_time=_wall(w.open), end_time=_wall(w.close), working_days=days, tz=tz)
        for w, days in _groups(spec)
    ]
    if spec.holidays:
        rules.append(btd.HolidayRule(_peer_holidays(spec), tz=tz))
    rule = btd.Rules(rules)

    def add(start: datetime, budget: timedelta) -> datetime:
        return start + btd.BusinessTimeDelta(rule, timedelta=budget)  # type: ignore[no-any-return]

    def elapsed(start: datetime, end: datetime) -> timedelta:
        return rule.difference(start, end).timedelta  # type: ignore[no-any-return]

    return Adapter(add, elapsed)


def pandas_adapter(calendar: calendars.Calendar) -> Adapter | None:
    import pandas as pd

    spec = calendar.spec
    windows = {w for w in spec.week if w}
    if len(windows) != 1 or spec.closures:
        return None  # one weekly pattern for every working day, no half days
    (pattern,) = windows
    if any(w.close - w.open == model.DAY for w in pattern):
        return None
    mask = " ".join(model.WEEKDAYS_LONG[d][:3].title() for d, w in enumerate(spec.week) if w)
    offset = pd.offsets.CustomBusinessHour(
        start=[str(w).split("-")[0] for w in pattern],
        end=[str(w).split("-")[1] for w in pattern],
        weekmask=mask,
        holidays=_peer_holidays(spec) if spec.holidays else [],
    )
    tz = calendar.tz

    def add(start: datetime, budget: timedelta) -> datetime:
        hours = budget // timedelta(hours=1)
        due = pd.Timestamp(start.astimezone(tz)) + hours * offset
        return due.to_pydatetime()  # type: ignore[no-any-return]

    # Whole-hour budgets only; no elapsed.
    return Adapter(add, None, accepts=lambda case: case.budget % timedelta(hours=1) == timedelta(0))


PEERS: dict[str, Callable[[calendars.Calendar], Adapter | None]] = {
    "workclock": workclock_adapter,
    "timegrid": timegrid_adapter,
    "businesstimedelta": businesstimedelta_adapter,
    "pandas CBH": pandas_adapter,
}


# --- running -------------------------------------------------------------------


@dataclass
class Result:
    """Answers and per-call times of one implementation (``None``: not run)."""

    name: str
    adds: list[datetime | None] = field(default_factory=list)
    elapseds: list[timedelta | None] = field(default_factory=list)
    add_ns: list[int] = field(default_factory=list)
    elapsed_ns: list[int] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


def run(
    name: str, adapters: dict[str, Adapter | None], cases: list[Case], timed: bool = True
) -> Result:
    """Every case through one implementation: a warm-up pass, then a timed pass."""
    result = Result(name)
    clock = time.perf_counter_ns
    for rep in range(2 if timed else 1):
        keep = rep == (1 if timed else 0)
        gc.disable()
        try:
            for case in cases:
                adapter = adapters.get(case.calendar)
                add = adapter.add if adapter and adapter.accepts(case) else None
                elapsed = adapter.elapsed if adapter and adapter.accepts(case) else None
                due: datetime | None = None
                worked: timedelta | None = None
                if add is not None:
                    t0 = clock()
                    try:
                        due = add(case.start, case.budget)
                    except Exception as exc:  # a peer's failure is a finding, not a crash
                        result.errors[type(exc).__name__] += keep
                    t1 = clock()
                    if keep and due is not None:
                        result.add_ns.append(t1 - t0)
                if elapsed is not None:
                    t0 = clock()
                    try:
                        worked = elapsed(case.start, case.end)
                    except Exception as exc:
                        result.errors[type(exc).__name__] += keep
                    t1 = clock()
                    if keep and worked is not None:
                        result.elapsed_ns.append(t1 - t0)
                if keep:
                    result.adds.append(due)
                    result.elapseds.append(worked)
        finally:
            gc.enable()
    return result


def taskflow_results(cases: list[Case], registry: calendars.Registry, timed: bool = True) -> Result:
    """taskflow's answers (and times) for the cases."""
    adapters: dict[str, Adapter | None] = {
        name: taskflow_adapter(registry.get(name)) for name in CALENDARS
    }
    return run("taskflow", adapters, cases, timed)


#: Versions of each calendar in the piecewise run (the issue's bound: up to 20).
VERSIONS = 20


def versioned(calendar: calendars.Calendar, count: int, seed: int) -> calendars.Calendar:
    """``calendar`` with ``count`` changes at random instants of the cases' span, alternating
    its own week with one where Friday closes at noon."""
    rng = random.Random(seed)
    spec = calendar.spec
    friday = tuple(model.Window(w.open, min(w.close, 12 * 3600)) for w in spec.week[4])
    variant = replace(spec, week=(*spec.week[:4], friday, *spec.week[5:]))
    lo = datetime.combine(FIRST, wall(), UTC).timestamp()
    hi = datetime.combine(LAST, wall(), UTC).timestamp()
    instants = sorted({datetime.fromtimestamp(int(rng.uniform(lo, hi)), UTC) for _ in range(count)})
    later = tuple(
        versions.Version(when, variant if i % 2 == 0 else spec, f"versions[{i}]")
        for i, when in enumerate(instants)
    )
    return calendars.Calendar(spec, later)


def piecewise_results(cases: list[Case], registry: calendars.Registry) -> Result:
    """taskflow's times for the cases on calendars of ``VERSIONS`` versions each."""
    adapters: dict[str, Adapter | None] = {
        name: taskflow_adapter(versioned(registry.get(name), VERSIONS, i))
        for i, name in enumerate(CALENDARS)
    }
    return run(f"taskflow {VERSIONS}v", adapters, cases)


def piecewise_line(single: Result, pieces: Result) -> str:
    """Piecewise (many versions) against single-version medians; the bound is 1.5x."""
    add, el = _stats(single.add_ns), _stats(single.elapsed_ns)
    padd, pel = _stats(pieces.add_ns), _stats(pieces.elapsed_ns)
    if not (add and el and padd and pel):
        return "piecewise: no samples"
    return (
        f"piecewise, {VERSIONS} versions per calendar: add {padd[0]:.2f} µs vs {add[0]:.2f} µs "
        f"single ({padd[0] / add[0]:.2f}x), elapsed {pel[0]:.2f} µs vs {el[0]:.2f} µs "
        f"({pel[0] / el[0]:.2f}x); bound 1.5x"
    )


# --- disagreements -------------------------------------------------------------


def _crosses_dst(tz: ZoneInfo, a: datetime, b: datetime) -> bool:
    lo, hi = sorted((a, b))
    return lo.astimezone(tz).utcoffset() != hi.astimezone(tz).utcoffset() or any(
        (lo + timedelta(days=k)).astimezone(tz).utcoffset() != lo.astimezone(tz).utcoffset()
        for k in range(int((hi - lo) / timedelta(days=1)) + 1)
    )


def _in_overnight_window(calendar: calendars.Calendar, t: datetime) -> bool:
    """``t`` falls in a weekly window that crosses midnight (either side of midnight).

    Holidays are ignored on purpose: a library that mishandles overnight starts
    does so whether or not a holiday then closes that part of the night.
    """
    local = t.astimezone(calendar.tz)
    since_midnight = local.hour * 3600 + local.minute * 60 + local.second
    week = calendar.spec.week
    today = week[local.weekday()]
    yesterday = week[(local.weekday() - 1) % 7]
    return any(w.close > model.DAY and w.open <= since_midnight for w in today) or any(
        w.close > model.DAY and since_midnight < w.close - model.DAY for w in yesterday
    )


def _dst_sized(difference: timedelta) -> bool:
    """A difference a wall-time library makes over a DST change (whole half hours, small)."""
    difference = abs(difference)
    return timedelta(0) < difference <= timedelta(hours=2) and not difference % timedelta(
        minutes=30
    )


def _same(a: datetime, b: datetime) -> bool:
    # Aware datetimes in a repeated hour never compare equal across zones (PEP 495).
    return a.astimezone(UTC) == b.astimezone(UTC)


class Classifier:
    """Names the reason taskflow and a peer differ on one case."""

    def __init__(self, registry: calendars.Registry) -> None:
        self.registry = registry
        self.cancel = {
            name: calendars.Calendar(_with_mode(registry.get(name).spec, "cancel-shift"))
            for name in CALENDARS
        }

    def add(self, case: Case, ours: datetime, theirs: datetime) -> str:
        calendar = self.registry.get(case.calendar)
        cancel = self.cancel[case.calendar]
        if _same(theirs, calendar.next_open(ours)) and not calendar.is_open(ours):
            return "due at the next opening instead of at the close"
        cancelled = cancel.add(case.start, case.budget)
        if _same(theirs, cancelled):
            return "holiday cancels the shift that starts on it"
        if _same(theirs, cancel.next_open(cancelled)) and not cancel.is_open(cancelled):
            return "holiday cancels the shift that starts on it + due at the next opening"
        # By taskflow's measure the peer accrued the budget give or take a DST jump.
        accrued = calendar.elapsed(case.start, theirs)
        if _dst_sized(accrued - case.budget) and _crosses_dst(
            calendar.tz, case.start, max(ours, theirs)
        ):
            return "DST change counted in wall time"
        if _in_overnight_window(calendar, case.start):
            return "start inside an overnight window"
        return "other"

    def elapsed(self, case: Case, ours: timedelta, theirs: timedelta) -> str:
        calendar = self.registry.get(case.calendar)
        if theirs == self.cancel[case.calendar].elapsed(case.start, case.end):
            return "holiday cancels the shift that starts on it"
        if _dst_sized(theirs - ours) and _crosses_dst(calendar.tz, case.start, case.end):
            return "DST change counted in wall time"
        if _in_overnight_window(calendar, case.start):
            return "start inside an overnight window"
        if abs(ours - theirs) < timedelta(seconds=1):
            return "sub-second precision dropped"
        return "other"


def _with_mode(spec: model.CalendarSpec, mode: model.HolidayMode) -> model.CalendarSpec:
    return replace(spec, holiday_mode=mode)


# --- report --------------------------------------------------------------------


def _stats(samples: list[int]) -> tuple[float, float] | None:
    if not samples:
        return None
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return statistics.median(ordered) / 1000, p99 / 1000


def _fmt(value: tuple[float, float] | None) -> tuple[str, str]:
    if value is None:
        return "-", "-"
    return f"{value[0]:.2f}", f"{value[1]:.2f}"


def report(
    cases: list[Case], ours: Result, peers: list[Result], registry: calendars.Registry
) -> str:
    lines = [
        f"{len(cases)} cases, calendars: {', '.join(CALENDARS)}",
        "",
        f"{'implementation':<18} {'add µs':>8} {'p99':>8} {'x':>6}   "
        f"{'elapsed µs':>10} {'p99':>8} {'x':>6}   {'add n':>6} {'elap n':>6}",
    ]
    base_add = _stats(ours.add_ns)
    base_el = _stats(ours.elapsed_ns)
    for result in (ours, *peers):
        add = _stats(result.add_ns)
        el = _stats(result.elapsed_ns)
        add_ratio = f"{add[0] / base_add[0]:.1f}" if add and base_add else "-"
        el_ratio = f"{el[0] / base_el[0]:.1f}" if el and base_el else "-"
        (am, ap), (em, ep) = _fmt(add), _fmt(el)
        lines.append(
            f"{result.name:<18} {am:>8} {ap:>8} {add_ratio:>6}   {em:>10} {ep:>8} {el_ratio:>6}   "
            f"{len(result.add_ns):>6} {len(result.elapsed_ns):>6}"
        )
    lines += ["", "x = peer median / taskflow median (higher: taskflow is faster)", ""]
    classify = Classifier(registry)
    lines.append("disagreements with taskflow (cases the peer can express):")
    for result in peers:
        classes: Counter[str] = Counter()
        for i, case in enumerate(cases):
            theirs_add, ours_add = result.adds[i], ours.adds[i]
            if theirs_add is not None and ours_add is not None and not _same(theirs_add, ours_add):
                classes["add: " + classify.add(case, ours_add, theirs_add)] += 1
            theirs_el, ours_el = result.elapseds[i], ours.elapseds[i]
            if theirs_el is not None and ours_el is not None and theirs_el != ours_el:
                classes["elapsed: " + classify.elapsed(case, ours_el, theirs_el)] += 1
        added = sum(1 for x in result.adds if x is not None)
        counted = sum(1 for x in result.elapseds if x is not None)
        total = sum(classes.values())
        lines.append(f"  {result.name}: {total} of {added} adds + {counted} elapsed")
        for label, count in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {count:>6}  {label}")
        for error, count in sorted(result.errors.items()):
            lines.append(f"    {count:>6}  raised {error}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="number of cases (10000)")
    parser.add_argument("--seed", type=int, default=20261129, help="random seed")
    parser.add_argument(
        "--peers", default=",".join(PEERS), help=f"comma-separated subset of: {', '.join(PEERS)}"
    )
    args = parser.parse_args(argv)
    registry = calendar_files.load_folder(ROOT / "calendars")
    cases = generate(args.cases, args.seed, registry)
    ours = taskflow_results(cases, registry)
    peers = []
    for peer in filter(None, (p.strip() for p in args.peers.split(","))):
        build = PEERS[peer]
        try:
            adapters = {name: build(registry.get(name)) for name in CALENDARS}
        except ImportError as exc:
            print(f"skipping {peer}: {exc} (pip install -e '.[bench]')", file=sys.stderr)
            continue
        peers.append(run(peer, adapters, cases))
    print(report(cases, ours, peers, registry))
    pieces = piecewise_results(cases, registry)
    print()
    print(piecewise_line(ours, pieces))
    return 0


if __name__ == "__main__":
    sys.exit(main())
