"""Shared helpers for the calendar tests: the shipped folder and DST-zone calendars."""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from taskflow.config.config import PROJECT_ROOT
from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import timeline
from taskflow.service.clocks import calendar_files

SHIPPED = PROJECT_ROOT / "calendars"
US = timedelta(microseconds=1)

#: The six DST zones the issue asks for, with a holiday country each.
ZONES: dict[str, tuple[str, str | None]] = {
    "America/New_York": ("US", None),
    "Europe/Berlin": ("DE", "BE"),
    "Australia/Lord_Howe": ("AU", "NSW"),
    "Asia/Kolkata": ("IN", "KA"),
    "Pacific/Chatham": ("NZ", None),
    "America/Santiago": ("CL", None),
}


@cache
def shipped() -> calendars.Registry:
    return calendar_files.load_folder(SHIPPED)


def zone_table(zone: str, mode: str = "remove-date") -> dict[str, Any]:
    """A calendar with windows around DST change times, split and overnight shifts."""
    country, subdivision = ZONES[zone]
    holidays: dict[str, Any] = {"country": country}
    if subdivision:
        holidays["subdivision"] = subdivision
    return {
        "name": f"dst-{zone.replace('/', '-').lower()}-{mode}",
        "timezone": zone,
        "holiday_mode": mode,
        "week": {
            "mon-thu": ["01:00-03:00", "09:00-12:30", "13:30-17:30", "22:00-02:30"],
            "fri": ["00:00-03:00", "09:00-17:00"],
            "sat": ["23:30-00:45"],
        },
        "holidays": holidays,
        "closures": [{"month": 12, "day": 24, "closes_at": "13:00", "reason": "half day"}],
        "working_days": [
            {"date": datetime(2028, 1, 8, tzinfo=UTC).date(), "hours": ["10:00-14:00"]}
        ],
    }


@cache
def zone_calendars() -> tuple[calendars.Calendar, ...]:
    out = []
    for zone in ZONES:
        for mode in ("remove-date", "cancel-shift"):
            out.append(calendars.from_dict(zone_table(zone, mode), source=f"<{zone}>"))
    return tuple(out)


def all_calendars() -> tuple[calendars.Calendar, ...]:
    return (*shipped(), *zone_calendars())


class Oracle:
    """A slow, plain implementation over one whole compiled span: linear scans, no laziness."""

    def __init__(self, calendar: calendars.Calendar, first: int, stop: int) -> None:
        self.tz = calendar.tz
        self.starts, self.ends = timeline.compile_years(calendar.spec, calendar.tz, first, stop)

    @staticmethod
    def us(t: datetime) -> int:
        return (t - timeline.EPOCH) // US

    def add(self, start: datetime, budget: timedelta) -> datetime:
        t = self.us(start)
        left = budget // US
        if left == 0:
            return start.astimezone(self.tz)
        for opens, closes in zip(self.starts, self.ends, strict=True):
            if closes <= t:
                continue
            begin = max(opens, t)
            if closes - begin >= left:
                return (timeline.EPOCH + timedelta(microseconds=begin + left)).astimezone(self.tz)
            left -= closes - begin
        raise AssertionError("budget runs past the oracle's span")

    def elapsed(self, start: datetime, end: datetime) -> timedelta:
        t0, t1 = self.us(start), self.us(end)
        total = 0
        for opens, closes in zip(self.starts, self.ends, strict=True):
            lo, hi = max(opens, t0), min(closes, t1)
            if hi > lo:
                total += hi - lo
        return timedelta(microseconds=total)

    def is_open(self, t: datetime) -> bool:
        us = self.us(t)
        i = bisect_right(self.ends, us)
        return i < len(self.ends) and self.starts[i] <= us
