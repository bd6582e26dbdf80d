"""Retry policies as values: waits, jitter, attempts, final and transient errors, business time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from taskflow.config import config
from taskflow.core.clocks import calendars
from taskflow.core.definition import Exponential, Fixed, Linear
from taskflow.core.definition import retries as r
from taskflow.service.clocks import calendar_files

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
seconds = st.integers(min_value=1, max_value=86_400).map(lambda s: timedelta(seconds=s))
attempts = st.integers(min_value=1, max_value=30)
draws = st.floats(min_value=0, max_value=1, exclude_max=True)


def test_each_policy_waits_as_named() -> None:
    fixed = Fixed(wait=timedelta(seconds=30), max_attempts=5)
    linear = Linear(first=timedelta(seconds=10), step=timedelta(seconds=5), max_attempts=5)
    expo = Exponential(
        first=timedelta(seconds=10), factor=3, max_wait=timedelta(minutes=2), max_attempts=9
    )
    assert [fixed.base_wait(n).total_seconds() for n in (1, 2, 3)] == [30, 30, 30]
    assert [linear.base_wait(n).total_seconds() for n in (1, 2, 3)] == [10, 15, 20]
    assert [expo.base_wait(n).total_seconds() for n in (1, 2, 3, 4, 5)] == [10, 30, 90, 120, 120]
    assert expo.describe() == "exponential from 10s x3 up to 2m, 9 attempts, real time"


@given(first=seconds, cap=seconds, factor=st.floats(min_value=1, max_value=10), n=attempts)
def test_exponential_waits_grow_and_never_pass_the_cap(
    first: timedelta, cap: timedelta, factor: float, n: int
) -> None:
    policy = Exponential(first=first, factor=factor, max_wait=cap, max_attempts=40)
    assert policy.base_wait(n) <= max(first, cap)
    assert policy.base_wait(n + 1) >= min(policy.base_wait(n), cap)


@given(wait=seconds, jitter=st.floats(min_value=0, max_value=1), draw=draws, n=attempts)
def test_jitter_adds_at_most_its_fraction(
    wait: timedelta, jitter: float, draw: float, n: int
) -> None:
    policy = Fixed(wait=wait, jitter=jitter, max_attempts=50)
    got = r.wait_after(policy, n, draw)
    assert wait <= got <= wait * (1 + jitter) + timedelta(microseconds=1)


@given(wait=seconds, most=st.integers(min_value=1, max_value=10), n=attempts, draw=draws)
def test_the_next_attempt_is_after_now_until_the_last(
    wait: timedelta, most: int, n: int, draw: float
) -> None:
    policy = Linear(first=wait, step=wait, max_attempts=most)
    at = r.next_attempt_at(policy, n, NOW, calendars.REAL_TIME, draw)
    if n >= most:
        assert at is None  # on_error only after the last attempt
    else:
        assert at is not None
        assert at >= NOW + policy.base_wait(n)


def test_final_errors_are_not_retried_and_transient_lists_are_exclusive() -> None:
    policy = Fixed(wait=timedelta(seconds=1), max_attempts=5, final=[ValueError])
    assert r.next_attempt_at(policy, 1, NOW, calendars.REAL_TIME, 0, ["ValueError"]) is None
    assert r.next_attempt_at(policy, 1, NOW, calendars.REAL_TIME, 0, ["KeyError"]) is not None
    only = Fixed(wait=timedelta(seconds=1), max_attempts=5, transient=["TimeoutError"])
    assert r.retryable(only, ["TimeoutError", "OSError", "Exception"])
    assert not r.retryable(only, ["KeyError", "LookupError", "Exception"])


def test_business_time_waits_in_working_hours() -> None:
    registry = calendar_files.load_folder(config.PROJECT_ROOT / "calendars")
    london = registry.get("uk-london")
    policy = Fixed(wait=timedelta(hours=1), max_attempts=3, time="business")
    friday_evening = datetime(2026, 12, 4, 17, 0, tzinfo=UTC)  # 30 min before closing
    at = r.next_attempt_at(policy, 1, friday_evening, london)
    assert at == datetime(2026, 12, 7, 9, 30, tzinfo=UTC)  # Monday, after 30 more minutes
