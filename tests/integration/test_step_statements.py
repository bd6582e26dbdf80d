"""What a worker's batch of steps costs the database, in statements (issue 21's benchmark).

A batch of plain successes (an automatic state with no slot, timer or recurring work whose
route leads to a terminal state) is the bench's case: its finish must not grow statements
back (each is a round trip and a few µs of the backend's CPU per step). A run leaving a
state that can have other due steps still has them cancelled (``test_steps.py``, ``goto``).
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from typing import Any

import pytest

from taskflow import clock
from taskflow.service.clocks import timers as timer_service
from taskflow.service.common import container
from taskflow.service.steps import steps
from taskflow.store.steps import steps as step_store
from tests.integration import step_workflows
from tests.integration.test_steps import _run, _start, _steps

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


async def test_a_success_leaving_a_state_with_a_due_follow_up_cancels_it(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """Not a plain success (the state has recurring work): the due step of the state left
    is cancelled with the decision, and never runs."""
    services = step_services
    run_id = await _start(services, "polling", "POLL-1")
    async with services.db.connection() as conn:  # a worker takes the action, then dies
        taken = await step_store.take_batch(conn, frozen_clock.now(), 10, 300.0, "gone")
    assert len(taken.steps) == 1
    now = frozen_clock.advance(timedelta(hours=1))
    assert await timer_service.run_due(services, now) >= 1  # the follow-up falls due
    by_kind = {s.kind: s for s in await _steps(services, run_id)}
    assert by_kind["every"].status == "due"
    # the action's lease ran out first: its next attempt succeeds, the run leaves the state
    assert await steps.run_batch(services, now, 1) == 1
    assert (await _run(services, run_id))["state"] == "done"
    by_kind = {s.kind: s for s in await _steps(services, run_id)}
    assert (by_kind["action"].status, by_kind["every"].status) == ("succeeded", "cancelled")
    assert await steps.run_due(services, now) == 0
    assert step_workflows.CALLS[f"followup:{run_id}"] == 0
