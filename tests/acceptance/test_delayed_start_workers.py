"""Delayed starts fired by real ``taskflow worker`` processes: each run starts exactly once.

Runs are scheduled through the use case (``startRun``'s ``startAt``) a few seconds ahead on
the real clock; two workers race for their start timers, one is killed with SIGKILL while
they fall due and another takes its place. Every run must start once: one ``run.started``
line, ACTIVE in its initial state with its first slot, its start timer fired once.
"""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.core.access.principals import Principal
from taskflow.core.runs import scheduling
from taskflow.service.runs import runs as run_service
from tests.acceptance.conftest import wait_until
from tests.acceptance.test_workers import Workers, query
from tests.conftest import services_with

pytestmark = pytest.mark.slow

RUNS = 200
ADA = Principal(id="ada", display_name="Ada", roles=("admin",))


def _schedule(database_url: str, settings: config.Settings, first: datetime) -> None:
    async def go() -> None:
        async with services_with(database_url, settings, clock.SystemClock()) as services:
            for i in range(RUNS):
                at = first + timedelta(milliseconds=20 * i)  # due over four seconds
                await run_service.start_run(
                    services,
                    ADA,
                    workflow="support-ticket",
                    subject_type="ticket",
                    external_id=f"T-{i}",
                    attributes={
                        "reference": f"T-{i}",
                        "priority": "P3",
                        "team": "billing-support",
                        "customer_email": "a@example.com",
                    },
                    idempotency_key=None,
                    delay=scheduling.Delay(at=at),
                )

    asyncio.run(go())


def _pending(url: str) -> int:
    found = query(url, "SELECT count(*) FROM timer WHERE kind = 'start' AND status = 'armed'")
    return int(found[0][0])


def test_workers_start_each_scheduled_run_once_even_when_one_is_killed(
    database_url: str, settings: config.Settings, tmp_path: Path
) -> None:
    first = datetime.now(UTC) + timedelta(seconds=4)
    _schedule(database_url, settings, first)
    assert _pending(database_url) == RUNS
    statuses = query(database_url, "SELECT status, count(*) AS n FROM run GROUP BY status")
    assert [(r["status"], r["n"]) for r in statuses] == [("scheduled", RUNS)]

    workers = Workers(database_url, tmp_path)
    try:
        victim, _ = workers.start(2, "--batch", "10")
        wait_until(lambda: _pending(database_url) < RUNS - 20, 60, "the first starts")
        victim.send_signal(signal.SIGKILL)  # its batch, if any, rolls back whole
        victim.wait(timeout=10)
        workers.start(1, "--batch", "10")
        wait_until(lambda: _pending(database_url) == 0, 90, f"every start\n{workers.output()}")
    finally:
        workers.stop()

    started = query(
        database_url,
        "SELECT run, count(*) AS n FROM audit_event WHERE kind = 'run.started' GROUP BY run",
    )
    assert len(started) == RUNS, "a scheduled run never started"
    assert max(r["n"] for r in started) == 1, "a run started twice"
    runs = query(database_url, "SELECT state, status, count(*) AS n FROM run GROUP BY 1, 2")
    assert [(r["state"], r["status"], r["n"]) for r in runs] == [("new", "active", RUNS)]
    timers = query(
        database_url,
        "SELECT status, fired, count(*) AS n FROM timer WHERE kind = 'start' GROUP BY 1, 2",
    )
    assert [(r["status"], r["fired"], r["n"]) for r in timers] == [("fired", 1, RUNS)]
    slots = query(database_url, "SELECT count(*) FROM slot WHERE status = 'open'")
    assert slots[0][0] == RUNS
