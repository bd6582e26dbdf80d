"""A ``taskflow worker`` process SIGKILLed while it runs an automatic step's action: after the
step's lease runs out another worker takes it again, exactly once more (at-least-once), with
the same idempotency key, and the run moves on."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.core.access.principals import INTEGRATION, Grant
from taskflow.service.access import principals as principal_service
from taskflow.service.runs import runs as run_service
from tests.acceptance.conftest import wait_until
from tests.acceptance.test_workers import Workers, query
from tests.conftest import services_with

WORKFLOWS = config.PROJECT_ROOT / "tests" / "integration" / "step_workflows.py"
LEASE = 5


def _start_run(url: str, settings: config.Settings, marker: Path) -> str:
    async def go() -> str:
        async with services_with(
            url, dataclasses.replace(settings, database_url=url), clock.SystemClock(), WORKFLOWS
        ) as services:
            app = await principal_service.get(services, "app")
            assert app is not None
            app = dataclasses.replace(app, powers=(Grant(INTEGRATION, workflows=("charging",)),))
            started = await run_service.start_run(
                services,
                app,
                workflow="charging",
                subject_type="order",
                external_id="K-1",
                attributes={"plan": ["hang", "ok"], "marker": str(marker), "amount": 7},
                idempotency_key=None,
            )
            return started.run.view.id

    return asyncio.run(go())


@pytest.mark.slow
def test_a_worker_killed_mid_action_leaves_exactly_one_more_attempt_after_its_lease(
    database_url: str, settings: config.Settings, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.txt"
    workers = Workers(database_url, tmp_path)
    workers.env.update(
        {
            "TASKFLOW_WORKFLOWS": f"{config.PROJECT_ROOT / 'examples'},{WORKFLOWS}",
            "TASKFLOW_STEP_LEASE": str(LEASE),
            "PYTHONPATH": str(config.PROJECT_ROOT),
        }
    )
    try:
        run_id = _start_run(database_url, settings, marker)
        [victim] = workers.start(1)
        wait_until(marker.exists, 30, f"the action to start\n{workers.output()}")
        victim.send_signal(signal.SIGKILL)  # mid-action: the attempt never finishes
        victim.wait(timeout=10)
        workers.start(1)

        def moved_on() -> bool:
            rows = query(database_url, f"SELECT state FROM run WHERE id = '{uuid.UUID(run_id)}'")
            return bool(rows) and rows[0]["state"] == "charged"

        wait_until(moved_on, 60, f"the run to move on\n{workers.output()}")
        attempts: list[Any] = query(
            database_url,
            "SELECT a.attempt, a.outcome, s.status, s.attempts FROM step_attempt a "
            "JOIN step s ON s.id = a.step ORDER BY a.attempt",
        )
        assert [(a["attempt"], a["outcome"]) for a in attempts] == [(1, "lost"), (2, "succeeded")]
        assert attempts[-1]["status"] == "succeeded"
        assert marker.read_text().count("attempt 1") == 1  # the killed one started once
        lines = query(database_url, "SELECT kind FROM audit_event WHERE kind LIKE 'step.%'")
        assert [r["kind"] for r in lines] == ["step.succeeded"]
    finally:
        workers.stop()
