"""Delivery states: the backoff after a failure, when a failure is final, SMTP reply codes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskflow import errors
from taskflow.core.delivery import delivery

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def test_the_backoff_doubles_from_a_minute_up_to_an_hour() -> None:
    waits = [delivery.backoff(n) for n in range(1, 10)]
    assert waits[:4] == [timedelta(minutes=m) for m in (1, 2, 4, 8)]
    assert waits[-1] == timedelta(hours=1)
    assert waits == sorted(waits)
    assert delivery.backoff(10_000) == timedelta(hours=1)


def test_a_temporary_failure_is_retried_until_the_attempts_run_out() -> None:
    assert delivery.after_failure(1, False, NOW) == (
        delivery.DeliveryState.FAILED,
        NOW + timedelta(minutes=1),
    )
    last = delivery.MAX_ATTEMPTS
    assert delivery.after_failure(last - 1, False, NOW)[0] == delivery.DeliveryState.FAILED
    assert delivery.after_failure(last, False, NOW) == (delivery.DeliveryState.DEAD, None)


def test_a_permanent_failure_is_dead_at_once() -> None:
    assert delivery.after_failure(1, True, NOW) == (delivery.DeliveryState.DEAD, None)


@pytest.mark.parametrize(
    ("code", "permanent"), [(550, True), (553, True), (451, False), (421, False), (None, False)]
)
def test_5xx_replies_are_permanent_and_the_rest_temporary(
    code: int | None, permanent: bool
) -> None:
    assert delivery.smtp_permanent(code) is permanent


def test_errors_are_kept_on_one_short_line() -> None:
    assert delivery.short_error("451 4.3.0\n  busy ") == "451 4.3.0 busy"
    long = delivery.short_error("x" * 2000)
    assert len(long) == delivery.ERROR_CHARS
    assert long.endswith("…")


def test_lease_and_limit_bounds() -> None:
    assert delivery.check_lease_seconds(300) == timedelta(minutes=5)
    assert delivery.check_take_limit(100) == 100
    for bad in (0, 9, 3601):
        with pytest.raises(errors.ValidationError, match="leaseSeconds"):
            delivery.check_lease_seconds(bad)
    for bad in (0, 101):
        with pytest.raises(errors.ValidationError, match="limit"):
            delivery.check_take_limit(bad)
