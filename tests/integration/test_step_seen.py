"""The finish of a step batch reuses the runs its take read, only while they did not change.

A worker reads a step's run when it takes the step, runs the action, then locks the run to
decide what follows. The run (or its subject, or what ``steps.once`` recorded) may change
in between: the decision must see the run as it is under the lock.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from taskflow import clock
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.steps import step_batch, steps
from taskflow.store.runs import subjects
from taskflow.store.steps import steps as step_store
from tests.integration.test_steps import _start

pytestmark = pytest.mark.anyio


async def _take(services: container.Services, now: Any) -> step_store.Taken:
    async with services.db.connection() as conn:
        return await step_store.take_batch(conn, now, 10, 300.0, "w")


async def _locked(
    services: container.Services, run_id: str, taken: step_store.Taken
) -> tuple[Any, bool]:
    """The run as the finish's lock gives it, and whether it is the one the take read."""
    async with services.db.transaction() as conn:
        view = (await step_store.lock_runs(conn, [run_id], taken.runs))[run_id]
    return view, view is taken.runs[run_id].view


async def test_the_run_read_by_the_take_is_reused_until_the_run_its_subject_or_once_change(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    now = frozen_clock.now()
    run_id = await _start(services, "charging", "SEEN-1", amount=5)
    taken = await _take(services, now)
    assert (await _locked(services, run_id, taken))[1]  # nothing changed: the same view
    # steps.once recorded a value (the run row is not written)
    async with services.db.transaction() as conn:
        await step_store.once_put(conn, run_id, "ticket", "T-1", now)
    view, same = await _locked(services, run_id, taken)
    assert not same
    assert view.once == {"ticket": "T-1"}
    taken = await _take(services, now.replace(year=now.year + 1))  # its lease ran out
    assert (await _locked(services, run_id, taken))[1]
    # its subject changed (the run row is not written)
    async with services.db.transaction() as conn:
        subject = await conn.fetchval("SELECT subject FROM run WHERE id = $1", uuid.UUID(run_id))
        await subjects.update(conn, str(subject), {"amount": 7}, now)
    view, same = await _locked(services, run_id, taken)
    assert not same
    assert view.subject == {"amount": 7}
    taken = await _take(services, now.replace(year=now.year + 2))
    # an entry action's result kept on the run (the run's version does not move)
    async with services.db.transaction() as conn:
        await step_store.finish_many(conn, [], [(run_id, "elsewhere", {"x": 1})], now)
    view, same = await _locked(services, run_id, taken)
    assert not same
    assert view.results == {"elsewhere": {"x": 1}}


async def test_a_run_cancelled_while_its_action_runs_stays_cancelled(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "charging", "SEEN-2", amount=5)
    taken = await _take(services, frozen_clock.now())
    [step] = taken.steps
    attempted = await steps.attempt(services, step, taken.runs[run_id], {})
    assert attempted.error is None
    assert not attempted.skipped
    ada = await principal_service.get(services, "ada")  # an admin
    assert ada is not None
    await run_service.cancel_run(services, ada, run_id=run_id, reason="the order was withdrawn")
    assert await step_batch.finish(services, [attempted]) == {step.id: "discarded"}
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT status, step_results FROM run WHERE id = $1", uuid.UUID(run_id)
        )
        status = await conn.fetchval("SELECT status FROM step WHERE id = $1", step.id)
    assert row is not None
    assert (row["status"], row["step_results"], status) == ("cancelled", {}, "cancelled")
