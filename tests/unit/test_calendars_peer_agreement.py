"""Agreement with workclock (an independent implementation of the same conventions).

Six DST zones, windows placed on DST change times (Lord Howe's half hour,
Chatham's 02:45, Santiago's midnight), split and overnight shifts, holidays
removing whole dates. workclock is installed by the ``dev`` extra, so this always runs.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from datetime import time as wall

import pytest
import workclock

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import model, timeline
from tests.unit.calendars.helpers import ZONES

WEEK = {
    "mon-thu": ["01:00-03:00", "09:00-12:30", "13:30-17:30", "22:00-02:30"],
    "fri": ["00:00-03:00", "09:00-17:00"],
    "sat": ["23:30-00:45"],
    "sun": ["02:00-04:00"],
}


def _pair(zone: str) -> tuple[calendars.Calendar, object]:
    country, subdivision = ZONES[zone]
    holidays = {"country": country, **({"subdivision": subdivision} if subdivision else {})}
    ours = calendars.from_dict({"name": "z", "timezone": zone, "week": WEEK, "holidays": holidays})
    rules: list[object] = []
    for weekday, windows in enumerate(ours.spec.week):
        for window in windows:
            opens, closes = window.open, window.close % model.DAY
            rules.append(
                workclock.WorkDay(
                    wall(opens // 3600, opens % 3600 // 60),
                    wall(closes // 3600, closes % 3600 // 60),
                    days=[weekday],
                )
            )
    dates = sorted(timeline.year_rules(ours.spec, 2019, 2037).holidays)
    rules.append(workclock.Holidays(dates))
    return ours, workclock.Schedule(rules, time_zone=zone)


@pytest.mark.parametrize("zone", sorted(ZONES))
def test_add_and_elapsed_agree_with_workclock(zone: str) -> None:
    ours, theirs = _pair(zone)
    rng = random.Random(zone)
    base = datetime(2020, 1, 1, tzinfo=UTC)
    for _ in range(400):
        start = base + timedelta(minutes=rng.randrange(16 * 365 * 24 * 60))
        if rng.random() < 0.5:
            # Near a DST change: the offset differs a day later.
            for _ in range(200):
                later = start + timedelta(days=1)
                if start.astimezone(ours.tz).utcoffset() != later.astimezone(ours.tz).utcoffset():
                    break
                start = base + timedelta(minutes=rng.randrange(16 * 365 * 24 * 60))
        start = start.astimezone(ours.tz)
        budget = timedelta(minutes=rng.randrange(1, 400 * 60))
        due = ours.add(start, budget)
        assert due.astimezone(UTC) == theirs.add(start, budget).astimezone(UTC), (start, budget)
        end = start + timedelta(minutes=rng.randrange(1, 20 * 24 * 60))
        assert ours.elapsed(start, end) == theirs.between(start, end), (start, end)
