"""Effective-dated calendars for the tests, and a piecewise oracle built from single versions."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

from taskflow.core.clocks import calendars
from tests.unit.calendars.helpers import Oracle, zone_table

WEEKS = (
    {"mon-fri": ["08:00-18:00"]},
    {"mon-thu": ["07:00-12:00", "13:00-19:00"], "fri": []},
    {"sat": ["22:00-06:00"], "sun": ["00:00-24:00"]},
    {"mon-tue": ["09:30-16:00"], "wed": ["01:00-03:00", "22:00-02:30"], "thu-fri": ["10:00-15:00"]},
)


def versioned_table(zone: str, count: int, seed: int, mode: str = "remove-date") -> dict[str, Any]:
    """``zone_table(zone)`` with ``count`` versions at random instants of 2026-2029:
    changed weeks, holidays dropped or changed, closures and extra days added."""
    rng = random.Random(seed)
    table = zone_table(zone, mode)
    lo = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    hi = datetime(2030, 1, 1, tzinfo=UTC).timestamp()
    # Whole minutes, some at midnight UTC and some inside working windows.
    instants = sorted({int(rng.uniform(lo, hi)) // 60 * 60 for _ in range(count)})
    out = []
    for i, stamp in enumerate(instants):
        when = datetime.fromtimestamp(stamp, UTC)
        version: dict[str, Any] = {"effective": when, "week": rng.choice(WEEKS)}
        if i % 3 == 1:
            version["holidays"] = {"country": ""} if i % 2 else {"country": "GB"}
        if i % 4 == 2:
            version["closures"] = [
                {"date": (when + timedelta(days=3)).date(), "reason": "move"},
                {"month": 7, "day": 1, "closes_at": "12:00", "reason": "summer"},
            ]
        if i % 5 == 3:
            version["working_days"] = [
                {"date": (when + timedelta(days=9)).date(), "hours": ["10:00-14:00"]}
            ]
        out.append(version)
    table["versions"] = out
    table["name"] = f"{table['name']}-v{count}-{seed}"
    return table


class PiecewiseOracle:
    """Sums each version's own oracle (a single-version calendar) over its span of instants."""

    def __init__(self, calendar: calendars.Calendar, first: int, stop: int) -> None:
        self.pieces = []
        found = calendar.versions
        for k, version in enumerate(found):
            since = version.effective
            until = found[k + 1].effective if k + 1 < len(found) else None
            self.pieces.append(
                (since, until, Oracle(calendars.Calendar(version.spec), first, stop))
            )

    def elapsed(self, start: datetime, end: datetime) -> timedelta:
        total = timedelta(0)
        for since, until, oracle in self.pieces:
            a = start if since is None else max(start, since)
            b = end if until is None else min(end, until)
            if b > a:
                total += oracle.elapsed(a, b)
        return total


def random_instant(rng: random.Random, first: date, last: date) -> datetime:
    lo = datetime.combine(first, datetime.min.time(), UTC).timestamp()
    hi = datetime.combine(last, datetime.min.time(), UTC).timestamp()
    whole = datetime.fromtimestamp(int(rng.uniform(lo, hi)) // 60 * 60, UTC)
    return (
        whole if rng.random() < 0.5 else whole + timedelta(microseconds=rng.randrange(60_000_000))
    )
