"""Property tests: shipped calendars and six DST zones, 2020-2035."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskflow.core.clocks import calendars
from tests.unit.calendars.helpers import Oracle, all_calendars

settings.register_profile(
    "calendars",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = settings.get_profile("calendars")
CALENDARS = all_calendars()
LO = datetime(2020, 1, 1, tzinfo=UTC)
SPAN_US = (datetime(2035, 12, 31, tzinfo=UTC) - LO) // timedelta(microseconds=1)

calendar_st = st.sampled_from(CALENDARS)
# Starts anywhere in 2020-2035, with a bias to whole minutes (openings, closings).
instant_st = st.one_of(
    st.integers(0, SPAN_US // 60_000_000).map(lambda m: LO + timedelta(minutes=m)),
    st.integers(0, SPAN_US).map(lambda us: LO + timedelta(microseconds=us)),
)
budget_st = st.one_of(
    st.integers(0, 400 * 60).map(lambda m: timedelta(minutes=m)),
    st.integers(0, 400 * 3_600_000_000).map(lambda us: timedelta(microseconds=us)),
)


def zoned(calendar: calendars.Calendar, t: datetime) -> datetime:
    return t.astimezone(calendar.tz)


@settings(PROFILE)
@given(calendar_st, instant_st, budget_st)
def test_elapsed_inverts_add(
    calendar: calendars.Calendar, start: datetime, budget: timedelta
) -> None:
    start = zoned(calendar, start)
    due = calendar.add(start, budget)
    assert due.tzinfo == calendar.tz
    assert calendar.elapsed(start, due) == budget


@settings(PROFILE)
@given(calendar_st, instant_st, budget_st, budget_st)
def test_add_is_monotone_in_budget(
    calendar: calendars.Calendar, start: datetime, a: timedelta, b: timedelta
) -> None:
    small, large = sorted((a, b))
    assert calendar.add(start, small) <= calendar.add(start, large)


@settings(PROFILE)
@given(calendar_st, instant_st, instant_st, budget_st)
def test_add_is_monotone_in_start(
    calendar: calendars.Calendar, s1: datetime, s2: datetime, budget: timedelta
) -> None:
    early, late = sorted((s1, s2))
    assert calendar.add(early, budget) <= calendar.add(late, budget)


@settings(PROFILE)
@given(calendar_st, instant_st, budget_st, budget_st)
def test_add_composes_for_starts_inside_working_time(
    calendar: calendars.Calendar, start: datetime, a: timedelta, b: timedelta
) -> None:
    start = calendar.next_open(start)
    assert calendar.add(calendar.add(start, a), b) == calendar.add(start, a + b)


@settings(PROFILE)
@given(calendar_st, instant_st, budget_st)
def test_due_instant_is_never_in_a_closed_period(
    calendar: calendars.Calendar, start: datetime, budget: timedelta
) -> None:
    due = calendar.add(start, budget)
    if budget:
        # Due at a close (half-open windows) or inside a window: the instant just before is open.
        assert calendar.is_open(due - timedelta(microseconds=1))
        assert calendar.elapsed(due - timedelta(microseconds=1), due) == timedelta(microseconds=1)


@settings(PROFILE)
@given(calendar_st, instant_st, instant_st)
def test_elapsed_is_additive(calendar: calendars.Calendar, a: datetime, b: datetime) -> None:
    lo, hi = sorted((a, b))
    mid = lo + (hi - lo) / 3
    assert calendar.elapsed(lo, mid) + calendar.elapsed(mid, hi) == calendar.elapsed(lo, hi)


@settings(PROFILE.__class__(PROFILE, max_examples=40))
@given(st.integers(0, len(CALENDARS) - 1), st.data())
def test_lazy_compilation_agrees_with_one_big_span(index: int, data: st.DataObject) -> None:
    # A fresh calendar each time so lazy growth and span seams are exercised.
    calendar = calendars.Calendar(CALENDARS[index].spec)
    oracle = Oracle(calendar, 2019, 2038)
    for _ in range(5):
        start = data.draw(instant_st)
        budget = data.draw(budget_st)
        due = calendar.add(start, budget)
        assert due == oracle.add(start, budget)
        assert calendar.is_open(start) == oracle.is_open(start)
        end = data.draw(instant_st)
        if end > start:
            assert calendar.elapsed(start, end) == oracle.elapsed(start, end)
