"""A worker finishes a full batch of steps while its next pass takes more
(``steps.Pipeline``): every step runs once, every run moves on, and a pass that is not
full ends with its steps written."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from taskflow.service.common import container
from taskflow.worker import loop
from tests.integration.test_steps import _start

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


async def test_a_worker_with_batches_smaller_than_the_work_runs_every_step_once(
    step_services: container.Services,
) -> None:
    services = step_services
    run_ids = [await _start(services, "charging", f"P-{i}", amount=i) for i in range(23)]
    async with loop.running(services, batch=5, poll=0.05) as worker:
        await asyncio.wait_for(worker.until(lambda: worker.steps >= 23), 60)
        # The last pass took fewer than a batch: it ended with its steps written.
        await asyncio.wait_for(worker.next_pass(), 60)
        async with services.db.connection() as conn:
            states = await conn.fetch(
                "SELECT state, count(*) AS n FROM run WHERE id = ANY($1::uuid[]) GROUP BY state",
                [uuid.UUID(r) for r in run_ids],
            )
            attempts = await conn.fetch(
                "SELECT a.outcome, count(*) AS n FROM step_attempt a JOIN step s ON s.id = a.step "
                "WHERE s.run = ANY($1::uuid[]) GROUP BY a.outcome",
                [uuid.UUID(r) for r in run_ids],
            )
    assert {r["state"]: r["n"] for r in states} == {"charged": 23}
    assert {r["outcome"]: r["n"] for r in attempts} == {"succeeded": 23}
    assert worker.steps == 23
