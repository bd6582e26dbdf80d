"""Automatic steps against PostgreSQL: results and routes, retries by the policy, final errors
routed, parked steps retried, leases that run out, ``steps.once`` across replays, ``every``."""

from __future__ import annotations

import dataclasses
import sys
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from taskflow import clock, errors
from taskflow.core.access.principals import INTEGRATION, Grant
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.steps import step_actions, step_admin, step_batch, steps
from taskflow.store.steps import steps as step_store

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


async def _start(
    services: container.Services, workflow: str, external_id: str, **attributes: Any
) -> str:
    app = await principal_service.get(services, "app")
    assert app is not None
    app = dataclasses.replace(app, powers=(Grant(INTEGRATION, workflows=(workflow,)),))
    started = await run_service.start_run(
        services,
        app,
        workflow=workflow,
        subject_type="order",
        external_id=external_id,
        attributes=attributes,
        idempotency_key=None,
    )
    return started.run.view.id


async def _run(services: container.Services, run_id: str) -> dict[str, Any]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT state, status, step_results FROM run WHERE id = $1", uuid.UUID(run_id)
        )
        kinds = [
            r["kind"]
            for r in await conn.fetch(
                "SELECT kind FROM audit_event WHERE run = $1 ORDER BY id", uuid.UUID(run_id)
            )
        ]
    assert row is not None
    return {**dict(row), "timeline": kinds}


def _calls(services: container.Services) -> Counter[str]:
    """The side effects counted by the actions, as the catalog loaded them (the workflow
    file is imported under a name of its own)."""
    path = services.catalog.get("ticketing").state("opening").action_path
    assert path is not None
    module = sys.modules[step_actions.resolve(path).__module__]
    calls: Counter[str] = module.CALLS
    return calls


async def _steps(services: container.Services, run_id: str) -> list[step_store.StepRecord]:
    async with services.db.connection() as conn:
        return (await step_store.of_runs(conn, [run_id]))[run_id]


async def test_a_result_is_stored_and_routes_the_run(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    small = await _start(services, "charging", "O-1", amount=40)
    large = await _start(services, "charging", "O-2", amount=400)
    assert (await _run(services, small))["state"] == "charge"  # it waits for the worker

    assert await steps.run_due(services, frozen_clock.now()) == 2

    small_run, large_run = await _run(services, small), await _run(services, large)
    assert (small_run["state"], small_run["status"]) == ("charged", "completed")
    assert (large_run["state"], large_run["status"]) == ("large", "completed")
    assert small_run["step_results"]["charge"]["amount"] == 40
    assert "step.succeeded" in small_run["timeline"]
    [step] = await _steps(services, small)
    assert (step.status, step.attempts, step.kind) == ("succeeded", 1, "action")
    assert [a.outcome for a in step.attempt_list] == ["succeeded"]
    # The idempotency key handed to the action is the step's own.
    assert step.result["key"] == step.key


async def test_a_transient_failure_is_retried_after_the_policy_wait_then_succeeds(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "charging", "O-3", amount=10, plan=["boom", "ok"])
    await steps.run_due(services, frozen_clock.now())
    [step] = await _steps(services, run_id)
    assert (step.status, step.attempts) == ("due", 1)
    assert step.due_at == frozen_clock.now() + timedelta(minutes=1)
    assert step.attempt_list[0].error_class == "Flaky"
    assert "attempt 1" in (step.attempt_list[0].error_message or "")
    assert "Traceback" in (step.attempt_list[0].traceback or "")
    assert (await _run(services, run_id))["state"] == "charge"

    frozen_clock.advance(timedelta(seconds=59))
    assert await steps.run_due(services, frozen_clock.now()) == 0  # not yet
    frozen_clock.advance(timedelta(seconds=1))
    assert await steps.run_due(services, frozen_clock.now()) == 1
    run = await _run(services, run_id)
    assert run["state"] == "charged"
    assert run["timeline"].count("step.retrying") == 1
    [step] = await _steps(services, run_id)
    assert [a.outcome for a in step.attempt_list] == ["failed", "succeeded"]


async def test_a_final_error_skips_the_retries_and_takes_its_on_error_route_to_a_person(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "charging", "O-4", plan=["declined"])
    assert await steps.run_due(services, frozen_clock.now()) == 1
    run = await _run(services, run_id)
    assert run["state"] == "declined"
    assert "step.failed" in run["timeline"]
    async with services.db.connection() as conn:
        slot = await conn.fetchrow(
            "SELECT name, status FROM slot WHERE run = $1", uuid.UUID(run_id)
        )
    assert dict(slot) == {"name": "resolve", "status": "open"}
    [step] = await _steps(services, run_id)
    assert (step.status, step.attempts) == ("failed", 1)


async def test_exhausted_attempts_without_a_route_park_the_step_until_an_operator_retries(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "charging", "O-5", plan=["boom", "boom", "boom", "ok"])
    for _ in range(3):
        await steps.run_due(services, frozen_clock.now())
        frozen_clock.advance(timedelta(minutes=1))
    [step] = await _steps(services, run_id)
    assert (step.status, step.attempts) == ("parked", 3)
    run = await _run(services, run_id)
    assert (run["state"], run["status"]) == ("charge", "active")
    assert "step.parked" in run["timeline"]
    assert await steps.run_due(services, frozen_clock.now() + timedelta(days=1)) == 0

    leah = await principal_service.get(services, "leah")  # a lead, of another workflow
    ada = await principal_service.get(services, "ada")  # an admin
    assert leah is not None
    assert ada is not None
    with pytest.raises(errors.NotFound):
        await step_admin.retry_step(services, leah, step.id)
    assert await step_admin.retry_step(services, ada, step.id) == run_id
    with pytest.raises(step_admin.StepNotParked):
        await step_admin.retry_step(services, ada, step.id)  # not parked any more
    await steps.run_due(services, frozen_clock.now())
    [step] = await _steps(services, run_id)
    # Counted anew: attempt 1 again (whose plan word is "boom"), so it waits a minute.
    assert (step.status, step.attempts, len(step.attempt_list)) == ("due", 4, 4)


async def test_a_worker_that_dies_mid_action_leaves_one_more_attempt_after_its_lease(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "charging", "O-6", amount=5)
    from taskflow.service.clocks import timers

    await timers.run_due(services, frozen_clock.now())  # the step is enqueued
    async with services.db.transaction() as conn:  # a worker takes it, then is killed
        [taken] = await step_store.take(conn, frozen_clock.now(), 10, 300.0, "dead-worker")
    assert taken.attempts == 1
    assert await steps.run_due(services, frozen_clock.now()) == 0  # its lease holds
    frozen_clock.advance(timedelta(seconds=299))
    assert await steps.run_due(services, frozen_clock.now()) == 0
    frozen_clock.advance(timedelta(seconds=1))
    assert await steps.run_due(services, frozen_clock.now()) == 1
    assert await steps.run_due(services, frozen_clock.now() + timedelta(hours=1)) == 0
    [step] = await _steps(services, run_id)
    assert [(a.attempt, a.outcome, a.worker) for a in step.attempt_list] == [
        (1, "lost", "dead-worker"),
        (2, "succeeded", steps.WORKER),
    ]
    assert (await _run(services, run_id))["state"] == "charged"
    # The dead worker's late answer, had it come, would have been discarded.
    definition = services.catalog.get("charging")
    policy = steps.policy_of(definition, taken)
    late = step_batch.Attempted(definition, taken, {"amount": 5}, None, 0.1, None, (), policy, None)
    assert await step_batch.finish(services, [late]) == {taken.id: "discarded"}
    [step] = await _steps(services, run_id)
    assert step.attempt_list[0].outcome == "discarded"
    assert (await _run(services, run_id))["state"] == "charged"


async def test_once_returns_the_first_result_on_a_replay(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "ticketing", "O-7", plan=["boom", "ok"])
    await steps.run_due(services, frozen_clock.now())
    frozen_clock.advance(timedelta(minutes=5))
    await steps.run_due(services, frozen_clock.now())
    run = await _run(services, run_id)
    assert run["state"] == "waiting"
    assert _calls(services)[f"ticket:{run_id}"] == 1  # the side effect ran once
    assert run["step_results"]["opening"]["ticket"].startswith("T-1-")
    assert run["timeline"].count("step.once") == 1


async def test_every_runs_while_the_run_stays_until_its_limit_and_a_timeout_action_keeps_it(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "ticketing", "O-8")
    await steps.run_due(services, frozen_clock.now())
    assert (await _run(services, run_id))["state"] == "waiting"
    frozen_clock.advance(timedelta(hours=1))
    await steps.run_due(services, frozen_clock.now())
    assert _calls(services)[f"timeout:{run_id}"] == 1
    assert (await _run(services, run_id))["state"] == "waiting"  # the timeout kept it there
    for week in range(1, 6):
        frozen_clock.advance(timedelta(days=7))
        await steps.run_due(services, frozen_clock.now())
        assert _calls(services)[f"followup:{run_id}"] == min(week, 4)
    found = await _steps(services, run_id)
    assert sorted(s.kind for s in found) == [
        "action",
        "every",
        "every",
        "every",
        "every",
        "timeout",
    ]


async def test_the_testing_kit_runs_a_definition_with_fake_actions_on_a_frozen_clock(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    seen: list[int] = []

    async def fake_charge(ctx: Any) -> dict[str, Any]:
        seen.append(ctx.attempt)
        if ctx.attempt == 1:
            raise TimeoutError("the fake payment service is slow")
        return {"amount": 1000}

    with step_actions.faked({"tests.integration.step_workflows:charge": fake_charge}):
        run_id = await _start(services, "charging", "O-9", amount=1)
        await steps.run_due(services, frozen_clock.now())
        frozen_clock.advance(timedelta(minutes=1))
        await steps.run_due(services, frozen_clock.now())
    assert seen == [1, 2]
    assert (await _run(services, run_id))["state"] == "large"  # the fake's result routed it


async def test_an_outcome_that_cannot_be_decided_parks_its_step_and_changes_nothing_else(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    broken = await _start(services, "hooked", "O-10")
    fine = await _start(services, "charging", "O-11")
    assert await steps.run_due(services, frozen_clock.now()) == 2  # one batch, both
    run = await _run(services, broken)
    assert (run["state"], run["step_results"]) == ("work", {})  # nothing of it was written
    assert "step.parked" in run["timeline"]
    [step] = await _steps(services, broken)
    assert step.status == "parked"
    assert "enter hook" in (step.last_error or "")
    assert (await _run(services, fine))["state"] == "charged"  # the batch went on


async def test_an_action_on_entry_runs_beside_the_slots_without_holding_the_run(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = step_services
    run_id = await _start(services, "noting", "O-12", amount=3, plan=["boom", "ok"])
    await steps.run_due(services, frozen_clock.now())
    frozen_clock.advance(timedelta(minutes=1))
    await steps.run_due(services, frozen_clock.now())
    run = await _run(services, run_id)
    assert run["state"] == "asking"  # it waits for the person, not for the action
    assert run["step_results"]["asking"]["amount"] == 3
    [step] = await _steps(services, run_id)
    assert (step.kind, step.status, step.attempts) == ("entry", "succeeded", 2)
    async with services.db.connection() as conn:
        status = await conn.fetchval("SELECT status FROM slot WHERE run = $1", uuid.UUID(run_id))
    assert status == "open"


async def test_the_step_row_is_due_when_the_state_is_entered_and_dropped_when_it_is_left(
    step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """No timer hop: starting the run writes its step row, due at once; an operator's goto
    before any worker took it cancels it, and no worker ever runs it."""
    from taskflow.service.operate import operate

    services = step_services
    run_id = await _start(services, "charging", "O-9", amount=5)
    [step] = await _steps(services, run_id)
    assert (step.status, step.kind, step.attempts) == ("due", "action", 0)
    async with services.db.connection() as conn:
        timers = await conn.fetchval("SELECT count(*) FROM timer WHERE run = $1", uuid.UUID(run_id))
    assert timers == 0
    ada = await principal_service.get(services, "ada")
    assert ada is not None
    await operate.goto(services, ada, run_id=run_id, state="charged", reason="paid by hand")
    [step] = await _steps(services, run_id)
    assert (step.status, step.attempt_list) == ("cancelled", ())
    assert await steps.run_due(services, frozen_clock.now()) == 0
    assert (await _run(services, run_id))["state"] == "charged"
