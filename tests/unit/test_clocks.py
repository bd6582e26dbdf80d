"""Milestone clocks as ledgers: due, elapsed, remaining, status across pauses, holidays and DST."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskflow.config import config
from taskflow.core.clocks import calendars, clocks
from taskflow.core.definition import budgets as bu
from taskflow.service.clocks import calendar_files

REGISTRY = calendar_files.load_folder(config.PROJECT_ROOT / "calendars")
LONDON = REGISTRY.get("uk-london")
NEW_YORK = REGISTRY.get("us-new-york")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def hours(n: float, calendar: str = "uk-london") -> bu.ResolvedBudget:
    return bu.ResolvedBudget("business", timedelta(hours=n), calendar)


def test_business_days_are_the_calendars_most_common_working_day() -> None:
    assert clocks.day_length(LONDON) == timedelta(hours=8, minutes=30)
    assert clocks.day_length(NEW_YORK) == timedelta(hours=8)
    assert clocks.day_length(REGISTRY.get("24x7")) == timedelta(hours=24)
    assert clocks.day_length(calendars.REAL_TIME) == timedelta(hours=24)
    two_days = bu.ResolvedBudget("business", timedelta(0), "uk-london", working_days=2)
    clock = clocks.start("finished", two_days, utc(2026, 12, 1, 15))  # Tuesday 15:00
    assert clocks.budget_time(clock, LONDON) == timedelta(hours=17)
    assert clocks.due_at(clock, LONDON) == utc(2026, 12, 3, 15)  # Thursday 15:00


def test_a_clock_runs_only_in_working_hours_and_over_the_weekend_waits() -> None:
    clock = clocks.start("finished", hours(4), utc(2026, 12, 4, 16))  # Friday 16:00
    assert clocks.due_at(clock, LONDON) == utc(2026, 12, 7, 11, 30)  # Monday 11:30
    saturday = utc(2026, 12, 5, 12)
    assert clocks.elapsed(clock, LONDON, saturday) == timedelta(hours=1, minutes=30)
    assert clocks.remaining(clock, LONDON, saturday) == timedelta(hours=2, minutes=30)
    assert clocks.status(clock, LONDON, saturday) == clocks.RUNNING


def test_a_pause_across_a_weekend_moves_the_due_instant_by_the_paused_business_time() -> None:
    clock = clocks.start("finished", hours(4), utc(2026, 12, 4, 15))  # Friday 15:00
    clock = clocks.pause(clock, utc(2026, 12, 4, 16))  # an hour spent, then waiting
    assert clock.paused
    assert clocks.status(clock, LONDON, utc(2026, 12, 7, 9)) == clocks.PAUSED
    assert clocks.due_at(clock, LONDON) is None  # nobody can say while it stands still
    assert clocks.elapsed(clock, LONDON, utc(2026, 12, 7, 9, 30)) == timedelta(hours=1)
    clock = clocks.resume(clock, utc(2026, 12, 7, 10))  # Monday 10:00
    # 3 h left from Monday 10:00; without the pause it would have been Monday 11:00.
    assert clocks.due_at(clock, LONDON) == utc(2026, 12, 7, 13)
    at_noon = utc(2026, 12, 7, 12)
    assert clocks.elapsed(clock, LONDON, at_noon) == timedelta(hours=3)
    assert clocks.status(clock, LONDON, at_noon) == clocks.AT_RISK  # 75 % spent
    assert clocks.status(clock, LONDON, at_noon, at_risk=0.8) == clocks.RUNNING
    assert clocks.status(clock, LONDON, utc(2026, 12, 7, 13)) == clocks.BREACHED
    assert clocks.breached_at(clock, LONDON, utc(2026, 12, 7, 14)) == utc(2026, 12, 7, 13)
    walk = "\n".join(clocks.explain(clock, LONDON))
    assert "paused 2026-12-04T16:00:00+00:00 -> 2026-12-07T10:00:00+00:00" in walk
    assert "due 2026-12-07T13:00:00+00:00" in walk


def test_holidays_are_skipped() -> None:
    # Thursday 24 December 16:00: 1h30 that day, then Christmas (Fri), the weekend and
    # Boxing Day's substitute (Mon 28) are closed; 7 h more on Tuesday 29 December.
    one_day = bu.ResolvedBudget("business", timedelta(0), "uk-london", working_days=1)
    clock = clocks.start("finished", one_day, utc(2026, 12, 24, 16))
    assert clocks.due_at(clock, LONDON) == utc(2026, 12, 29, 16)
    walk = clocks.explain(clock, LONDON)
    assert any("holiday" in line and "2026-12-25" in line for line in walk)


def test_a_pause_across_the_daylight_saving_change() -> None:
    # New York moves to summer time on Sunday 14 March 2027: Friday 16:00 EST is 21:00Z,
    # Monday 09:00 EDT is 13:00Z.
    clock = clocks.start("finished", hours(2, "us-new-york"), utc(2027, 3, 12, 20))
    clock = clocks.pause(clock, utc(2027, 3, 12, 21))  # one hour spent
    clock = clocks.resume(clock, utc(2027, 3, 15, 12))  # before Monday's opening
    assert clocks.due_at(clock, NEW_YORK) == utc(2027, 3, 15, 14)
    real = bu.ResolvedBudget("real", timedelta(hours=24), None)
    wall = clocks.start("finished", real, utc(2027, 3, 13, 17))  # Saturday 12:00 EST
    assert clocks.calendar_of(REGISTRY, wall) is calendars.REAL_TIME
    # 24 real hours later is 13:00 EDT on the wall: real time counts every second.
    assert clocks.due_at(wall, calendars.REAL_TIME) == utc(2027, 3, 14, 17)


def test_met_clocks_stop_and_say_whether_they_breached() -> None:
    clock = clocks.start("assigned", hours(1), utc(2026, 12, 1, 9))
    early = clocks.meet(clock, utc(2026, 12, 1, 9, 20))
    assert clocks.status(early, LONDON, utc(2026, 12, 2, 9)) == clocks.MET
    assert clocks.elapsed(early, LONDON, utc(2026, 12, 2, 9)) == timedelta(minutes=20)
    assert clocks.breached_at(early, LONDON, utc(2026, 12, 2, 9)) is None
    late = clocks.meet(clock, utc(2026, 12, 1, 11))
    assert clocks.breached_at(late, LONDON, utc(2026, 12, 2, 9)) == utc(2026, 12, 1, 10)
    paused = clocks.pause(clock, utc(2026, 12, 1, 9, 30))
    met_while_paused = clocks.meet(paused, utc(2026, 12, 1, 12))
    assert not met_while_paused.paused
    assert clocks.elapsed(met_while_paused, LONDON, utc(2026, 12, 3)) == timedelta(minutes=30)


def test_a_new_budget_keeps_the_time_already_spent() -> None:
    clock = clocks.start("finished", hours(8), utc(2026, 12, 1, 9))
    now = utc(2026, 12, 1, 11)
    regraded = clocks.rebudget(clock, hours(4), now)
    assert clocks.elapsed(regraded, LONDON, now) == clocks.elapsed(clock, LONDON, now)
    assert clocks.due_at(regraded, LONDON) == utc(2026, 12, 1, 13)
    assert clocks.remaining(regraded, LONDON, now) == timedelta(hours=2)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(hours=3, minutes=20), "3h 20m"),
        (timedelta(0), "0m"),
        (timedelta(days=2, hours=1), "2d 1h"),
        (timedelta(seconds=45), "45s"),
    ],
)
def test_durations_read_as_text(value: timedelta, text: str) -> None:
    assert clocks.duration(value) == text
