"""What a worker's batch of steps costs the database, in statements (issue 21's benchmark).

A batch of plain successes (an automatic state with no slot, timer or recurring work whose
route leads to a terminal state) is the bench's case: its finish must not grow statements
back (each is a round trip and a few µs of the backend's CPU per step). A run leaving a
state that can have other due steps still has them cancelled (``test_steps.py``, ``goto``).
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest

from taskflow import clock
from taskflow.service import container, steps
from tests.integration.test_steps import _run, _start

pytestmark = pytest.mark.anyio


async def test_a_batch_of_plain_successes_takes_and_finishes_in_few_statements(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    run_ids = [await _start(step_services, "charging", f"STMT-{i}", amount=i) for i in range(5)]
    seen: list[str] = []
    async with step_services.db.connection() as conn:
        raw: Any = conn

        def logged(record: Any) -> None:
            seen.append(" ".join(str(record.query).split()))

        raw.add_query_logger(logged)
        try:
            services = dataclasses.replace(step_services, db=step_services.db.bound(conn))
            assert await steps.run_batch(services, frozen_clock.now(), 10) == 5
        finally:
            raw.remove_query_logger(logged)
    for run_id in run_ids:
        assert (await _run(step_services, run_id))["state"] == "charged"
    # the take (one statement), then the finish: BEGIN, the runs', live slots' and steps'
    # locks, the slots and timers read, the runs, the lines, the attempts and steps, COMMIT
    assert len(seen) <= 11, "\n".join(seen)
    # no run of the batch can have a due step of the state it left: none is looked for
    assert not [q for q in seen if "SET status = 'cancelled'" in q], "\n".join(seen)
    async with step_services.db.connection() as conn:
        statuses = await conn.fetch(
            "SELECT status FROM step WHERE run = ANY($1::uuid[])", [uuid.UUID(r) for r in run_ids]
        )
    assert {r["status"] for r in statuses} == {"succeeded"}
