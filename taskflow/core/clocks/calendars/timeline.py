"""Compiling a calendar into sorted UTC working intervals, a span of years at a time.

Instants are integer microseconds since 1970-01-01T00:00Z ("µs"). Windows are
read in local wall time and resolved to instants the way RFC 5545 says, which
is also what ``zoneinfo`` does with ``fold=0``: a wall time skipped by a DST
change uses the offset before the change (so it moves forward by the gap), and
a repeated wall time takes the earlier instant.
"""

from __future__ import annotations

import functools
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from taskflow.core.clocks.calendars import model
from taskflow.core.common import durations

EPOCH = durations.EPOCH
ONE_US = durations.US
ONE_DAY = timedelta(days=1)


def local_us(tz: ZoneInfo, day: date, seconds: int) -> int:
    """The instant (µs) of wall time ``seconds`` after midnight of ``day`` in ``tz`` (fold=0)."""
    if seconds >= model.DAY:
        day += timedelta(days=seconds // model.DAY)
        seconds %= model.DAY
    hour, rest = divmod(seconds, 3600)
    wall = datetime(day.year, day.month, day.day, hour, rest // 60, rest % 60, tzinfo=tz)
    return (wall - EPOCH) // ONE_US


def year_rules(spec: model.CalendarSpec, first: int, last: int) -> model.YearRules:
    """Holidays, closures and worked days for the years ``first..last`` inclusive."""
    holidays: dict[date, str] = {}
    source = spec.holidays
    if source is not None and first <= last:
        holidays = _public_holidays(source, first, last)
    closures: dict[date, tuple[model.Closure, ...]] = {}
    working: dict[date, model.WorkingDay] = {}
    # Yearly rules with a day offset can move a date across a year end.
    for year in range(first - 1, last + 2):
        for closure in spec.closures:
            for day in closure.when.dates(year):
                closures[day] = (*closures.get(day, ()), closure)
        for worked in spec.working_days:
            for day in worked.when.dates(year):
                working[day] = worked
    return model.YearRules(holidays=holidays, closures=closures, working=working)


@functools.lru_cache(maxsize=128)
def _public_holidays(source: model.HolidaySource, first: int, last: int) -> dict[date, str]:
    # Cached: the package builds its tables afresh on every call (about a millisecond), and
    # an explanation asks for the years of each walk it renders. Callers only read the dict.
    import holidays as holidays_package

    kwargs: dict[str, Any] = {"subdiv": source.subdivision, "years": list(range(first, last + 1))}
    if source.categories is not None:
        kwargs["categories"] = source.categories
    with warnings.catch_warnings():
        # The package warns about years it has no data for; no data means no holiday.
        warnings.simplefilter("ignore")
        found = holidays_package.country_holidays(source.country, **kwargs)
    return {
        day: name
        for day, name in sorted(found.items())
        # A date can carry several holidays ("A; B"): it stays closed unless all are ignored.
        if any(part.strip() not in source.ignore for part in name.split(";"))
    }


def compile_years(
    spec: model.CalendarSpec, tz: ZoneInfo, first: int, stop: int
) -> tuple[list[int], list[int]]:
    """Working intervals (starts, ends in µs) for local years ``first <= y < stop``.

    The result is sorted, merged (touching windows join) and clipped to
    ``[local midnight of 1 Jan first, local midnight of 1 Jan stop)``, so spans
    compiled separately concatenate exactly.
    """
    lo = local_us(tz, date(first, 1, 1), 0)
    hi = local_us(tz, date(stop, 1, 1), 0)
    rules = year_rules(spec, first - 1, stop)
    raw: list[tuple[int, int]] = []
    blackouts: list[tuple[int, int]] = []
    # Start a day early: the previous evening's overnight window reaches into the span.
    day = date(first, 1, 1) - ONE_DAY
    end = date(stop, 1, 1)
    while day < end:
        plan = model.plan_day(spec, rules, day)
        for window in plan.windows:
            opens = local_us(tz, day, window.open)
            closes = local_us(tz, day, window.close)
            if closes > opens:
                raw.append((opens, closes))
        if plan.blackout:
            blackouts.append((local_us(tz, day, 0), local_us(tz, day, model.DAY)))
        day += ONE_DAY
    merged = _subtract(_merge(raw), _merge(blackouts))
    starts: list[int] = []
    ends: list[int] = []
    for opens, closes in merged:
        opens = max(opens, lo)
        closes = min(closes, hi)
        if closes > opens:
            starts.append(opens)
            ends.append(closes)
    return starts, ends


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for opens, closes in sorted(intervals):
        if out and opens <= out[-1][1]:
            if closes > out[-1][1]:
                out[-1] = (out[-1][0], closes)
        else:
            out.append((opens, closes))
    return out


def _subtract(
    intervals: list[tuple[int, int]], holes: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """``intervals`` minus ``holes``; both sorted and merged."""
    out: list[tuple[int, int]] = []
    k = 0
    for opens, closes in intervals:
        while k < len(holes) and holes[k][1] <= opens:
            k += 1
        j = k
        cursor = opens
        while j < len(holes) and holes[j][0] < closes:
            if holes[j][0] > cursor:
                out.append((cursor, holes[j][0]))
            cursor = max(cursor, holes[j][1])
            j += 1
        if cursor < closes:
            out.append((cursor, closes))
    return out


def join(
    left: tuple[list[int], list[int]], right: tuple[list[int], list[int]]
) -> tuple[list[int], list[int]]:
    """Concatenate two adjacent compiled spans, merging a window cut at the seam."""
    starts = list(left[0])
    ends = list(left[1])
    rstarts, rends = right
    if starts and rstarts and ends[-1] == rstarts[0]:
        ends[-1] = rends[0]
        rstarts, rends = rstarts[1:], rends[1:]
    starts.extend(rstarts)
    ends.extend(rends)
    return starts, ends


def compile_pieces(
    pieces: Sequence[tuple[int | None, model.CalendarSpec]], tz: ZoneInfo, first: int, stop: int
) -> tuple[list[int], list[int]]:
    """``compile_years`` for an effective-dated calendar: each definition on its own span.

    ``pieces`` are (effective µs, definition), the first effective since always
    (``None``), in order. Each definition's intervals are clipped to
    ``[its instant, the next one's)``; an interval cut at a change and resumed
    by the next definition joins, as touching windows do.
    """
    if len(pieces) == 1:
        return compile_years(pieces[0][1], tz, first, stop)
    lo = local_us(tz, date(first, 1, 1), 0)
    hi = local_us(tz, date(stop, 1, 1), 0)
    out: tuple[list[int], list[int]] = ([], [])
    for k, (since, spec) in enumerate(pieces):
        until = pieces[k + 1][0] if k + 1 < len(pieces) else None
        a = lo if since is None else max(lo, since)
        b = hi if until is None else min(hi, until)
        if b <= a:
            continue
        # The local years that hold [a, b): a year either side for offsets near midnight.
        y0 = max(first, _year_of(tz, a) - 1)
        y1 = min(stop, _year_of(tz, b) + 1)
        starts, ends = compile_years(spec, tz, y0, y1)
        i = bisect_right(ends, a)
        j = bisect_left(starts, b)
        cut = ([max(s, a) for s in starts[i:j]], [min(e, b) for e in ends[i:j]])
        out = join(out, cut)
    return out


def _year_of(tz: ZoneInfo, us: int) -> int:
    return (EPOCH + timedelta(microseconds=us)).astimezone(tz).year
