"""Report periods (``reports.period_starts``): local days, weeks and months of a zone, cut
at the first instant of each, across clock changes."""

from __future__ import annotations

import bisect
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from taskflow.core.reports import reports


def starts_of(zone: str, period: str, start: datetime, end: datetime) -> list[datetime]:
    return reports.period_starts(
        reports.ReportRequest(start, end, (reports.PERIOD,), None, period, zone)
    )


def days(zone: str, start: tuple[int, ...], end: tuple[int, ...]) -> list[datetime]:
    """Local days of ``zone`` touching the window [start, end) (UTC date-time tuples)."""
    return starts_of(zone, "day", datetime(*start, tzinfo=UTC), datetime(*end, tzinfo=UTC))


def local_period(at: datetime, zone: ZoneInfo, period: str) -> date:
    """The local date an instant's period starts on, by its local date (date_trunc's way)."""
    day = at.astimezone(zone).date()
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def clock_changes(zone: ZoneInfo, year: int) -> list[datetime]:
    """Instants (to the hour) at which the zone's UTC offset changes during ``year``."""
    at = datetime(year, 1, 1, tzinfo=UTC)
    changes = []
    while at.year == year:
        after = at + timedelta(hours=1)
        if at.astimezone(zone).utcoffset() != after.astimezone(zone).utcoffset():
            changes.append(after)
        at = after
    return changes


#: Zones and years whose clock changes test the edges: at midnight forward (Sao Paulo
#: 2018, Santiago) and back (Havana, the Azores), by 30 minutes (Lord Howe), a skipped
#: day (Samoa 2011), and the ordinary ones.
EDGES = [
    ("Europe/London", 2026),
    ("America/New_York", 2026),
    ("America/Havana", 2026),
    ("Atlantic/Azores", 2026),
    ("America/Sao_Paulo", 2018),
    ("America/Santiago", 2026),
    ("Asia/Beirut", 2026),
    ("Australia/Lord_Howe", 2026),
    ("Pacific/Chatham", 2026),
    ("Pacific/Apia", 2011),
]


@pytest.mark.parametrize("period", reports.PERIOD_UNITS)
@pytest.mark.parametrize(("zone_name", "year"), EDGES)
def test_every_instant_near_a_clock_change_falls_in_its_local_period(
    zone_name: str, year: int, period: str
) -> None:
    zone = ZoneInfo(zone_name)
    changes = clock_changes(zone, year)
    assert changes, f"{zone_name} changed its clocks in {year}"
    for change in changes:
        start, end = change - timedelta(days=40), change + timedelta(days=3)
        starts = starts_of(zone_name, period, start, end)
        labels = [s.astimezone(zone).date() for s in starts]
        assert labels == sorted(set(labels)), "one period per local start, in order"
        at = change - timedelta(hours=26)
        while at < change + timedelta(hours=26):
            found = starts[bisect.bisect_right(starts, at) - 1]
            assert found <= at
            assert found.astimezone(zone).date() == local_period(at, zone, period), (at, found)
            at += timedelta(minutes=5)


def test_a_period_starts_at_the_change_when_clocks_skip_its_midnight() -> None:
    # Sao Paulo, 4 November 2018: clocks went from 00:00 straight to 01:00.
    got = days("America/Sao_Paulo", (2018, 11, 3, 12), (2018, 11, 5))
    assert [d.isoformat() for d in got] == [
        "2018-11-03T00:00:00-03:00",
        "2018-11-04T01:00:00-02:00",
    ]


def test_a_repeated_midnight_starts_the_day_at_its_first_occurrence() -> None:
    # Havana, 1 November 2026: clocks go back from 01:00 to 00:00, so midnight comes twice.
    got = days("America/Havana", (2026, 11, 1, 3), (2026, 11, 2))
    assert [d.astimezone(UTC) for d in got] == [
        datetime(2026, 10, 31, 4, tzinfo=UTC),
        datetime(2026, 11, 1, 4, tzinfo=UTC),
    ]


def test_a_skipped_day_is_no_period() -> None:
    # Samoa skipped 30 December 2011 when it crossed the date line.
    got = days("Pacific/Apia", (2011, 12, 29), (2011, 12, 31))
    assert [d.date() for d in got] == [date(2011, 12, 28), date(2011, 12, 29), date(2011, 12, 31)]


def test_the_hour_repeated_across_midnight_stays_in_the_new_day() -> None:
    # Newfoundland until 2011 set clocks back at 00:01 to 23:01: after the change, local
    # times 23:01-00:00 of the day before come again. Periods run without gaps, so that
    # repeated hour counts in the new day (date_trunc would put it back in the old one).
    zone = ZoneInfo("America/St_Johns")
    got = days("America/St_Johns", (2006, 10, 28, 12), (2006, 10, 30))
    change = datetime(2006, 10, 29, 2, 31, tzinfo=UTC)  # 00:01 NDT, then 23:01 NST
    repeated = change + timedelta(minutes=30)
    assert repeated.astimezone(zone).date() == date(2006, 10, 28)
    found = got[bisect.bisect_right(got, repeated) - 1]
    assert found.astimezone(zone).date() == date(2006, 10, 29)


def test_periods_cover_the_window_and_no_more() -> None:
    start, end = datetime(2026, 11, 3, 15, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)
    weeks = starts_of("Europe/London", "week", start, end)
    assert weeks[0] <= start < weeks[1]
    assert weeks[-1] < end <= weeks[-1] + timedelta(weeks=1)
    assert [w.date() for w in weeks] == [date(2026, 11, d) for d in (2, 9, 16, 23, 30)]
