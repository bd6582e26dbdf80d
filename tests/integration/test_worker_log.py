"""The worker logs one line per batch that took timers: taken, fired, failed, lag."""

from __future__ import annotations

import logging

import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.integration.test_timer_batches import seed

pytestmark = pytest.mark.anyio


def _batch_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "taskflow.worker" and r.msg.startswith("timer batch")
    ]


async def test_a_batch_that_fired_logs_one_line_and_an_empty_pass_logs_none(
    services: container.Services,
    frozen_clock: clock.FrozenClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    await seed(services, 3)
    now = frozen_clock.now()
    assert await timers.fire_batch(services, now, 100) == (3, 3)
    (line,) = _batch_lines(caplog)
    fields = vars(line)
    assert (fields["taken"], fields["fired"], fields["failed"]) == (3, 3, 0)
    assert isinstance(fields["lag_ms"], int)
    assert fields["lag_ms"] >= 0
    assert line.getMessage() == "timer batch: took 3, fired 3, failed 0"

    caplog.clear()
    assert await timers.fire_batch(services, now, 100) == (0, 0)
    assert _batch_lines(caplog) == []
