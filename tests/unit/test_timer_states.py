"""What a failed firing makes of its timer: backoff with jitter, then dead; the settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskflow import errors
from taskflow.config import config
from taskflow.core.clocks import timer_states as ts

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_backoff_doubles_from_the_base_up_to_the_cap_with_equal_jitter() -> None:
    policy = ts.RetryPolicy(max_attempts=20, base_seconds=30, max_seconds=600)
    assert policy.backoff(1, 0.0) == timedelta(seconds=15)
    assert policy.backoff(1, 1.0) == timedelta(seconds=30)
    assert policy.backoff(3, 0.5) == timedelta(seconds=90)  # step 120: 60 + 30
    assert policy.backoff(10, 1.0) == timedelta(seconds=600)  # capped
    assert policy.backoff(10, 0.0) == timedelta(seconds=300)


def test_failures_count_up_to_max_attempts_then_the_timer_is_dead() -> None:
    policy = ts.RetryPolicy(max_attempts=3, base_seconds=10, max_seconds=100)
    error = ValueError("the owner\n  'x' is unknown")
    first = ts.after_failure(0, error, NOW, policy, 0.0)
    assert (first.attempts, first.status) == (1, ts.TimerStatus.ARMED)
    assert first.next_at == NOW + timedelta(seconds=5)
    assert first.error == "ValueError: the owner 'x' is unknown"
    assert ts.after_failure(1, error, NOW, policy, 1.0).next_at == NOW + timedelta(seconds=20)
    last = ts.after_failure(2, error, NOW, policy, 0.3)
    assert (last.attempts, last.status, last.next_at) == (3, ts.TimerStatus.DEAD, None)


def test_a_long_error_is_cut_short() -> None:
    text = ts.describe(RuntimeError("x" * 5000))
    assert len(text) == ts.MAX_ERROR
    assert text.startswith("RuntimeError: xxx")
    assert text.endswith("…")
    assert ts.describe(KeyError()) == "KeyError"


def _settings(tmp_path: Path, **env: str) -> config.Settings:
    return config.load(
        {"TASKFLOW_DATA_DIR": str(tmp_path), "TASKFLOW_SECRET_KEYS": "k" * 40, **env}
    )


def test_retry_settings_default_and_are_read(tmp_path: Path) -> None:
    default = _settings(tmp_path)
    assert (default.timer_max_attempts, default.timer_backoff_base) == (8, 30.0)
    assert default.timer_backoff_max == 3600.0
    custom = _settings(
        tmp_path,
        TASKFLOW_TIMER_MAX_ATTEMPTS="3",
        TASKFLOW_TIMER_BACKOFF_BASE="0.5",
        TASKFLOW_TIMER_BACKOFF_MAX="60",
    )
    assert (custom.timer_max_attempts, custom.timer_backoff_base) == (3, 0.5)
    assert custom.timer_backoff_max == 60.0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TASKFLOW_TIMER_MAX_ATTEMPTS", "0"),
        ("TASKFLOW_TIMER_MAX_ATTEMPTS", "2.5"),
        ("TASKFLOW_TIMER_BACKOFF_BASE", "-1"),
        ("TASKFLOW_TIMER_BACKOFF_MAX", "soon"),
        ("TASKFLOW_TIMER_BACKOFF_MAX", "inf"),
    ],
)
def test_a_bad_retry_setting_says_what_to_write(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(errors.ConfigError, match=name):
        _settings(tmp_path, **{name: value})
