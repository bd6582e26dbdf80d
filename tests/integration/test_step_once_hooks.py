"""``steps.once`` in an enter hook: the value recorded by the decision that runs the hook, in
its transaction; kept when the state is left and entered again; the first committed value
winning a race (the decision that lost it is tried again and reads it)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from taskflow import steps as tf_steps
from taskflow.core.runs.decision import Decision
from taskflow.core.steps import once as hook_once
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.operate import operate
from taskflow.store.runs import runs as rows
from tests.integration.test_steps import _run, _start

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


def _module(services: container.Services) -> ModuleType:
    """The workflow file as the catalog imported it (under a name of its own)."""
    hook = services.catalog.get("welcoming").state("greeting").on_enter
    assert hook is not None
    return sys.modules[hook.__module__]


async def _goto(services: container.Services, run_id: str, state: str) -> None:
    ada = await principal_service.get(services, "ada")
    assert ada is not None
    await operate.goto(services, ada, run_id=run_id, state=state, reason="by hand")


async def _recorded(services: container.Services, run_id: str) -> list[tuple[str, Any]]:
    async with services.db.connection() as conn:
        found = await conn.fetch(
            "SELECT name, result FROM step_once WHERE run = $1 ORDER BY id", uuid.UUID(run_id)
        )
    return [(r["name"], r["result"]) for r in found]


async def test_a_hook_records_once_and_gets_the_value_back_when_the_state_is_entered_again(
    step_services: container.Services,
) -> None:
    services = step_services
    module = _module(services)
    run_id = await _start(services, "welcoming", "W-1")
    await _goto(services, run_id, "greeting")  # entered: fn runs, the value is recorded
    seen = len(module.SEEN)
    await _goto(services, run_id, "arriving")  # left
    await _goto(services, run_id, "greeting")  # entered again: the recorded value
    assert module.SEEN[seen - 1 :] == ["B-1", "B-1"]
    assert module.CALLS[f"badge:{run_id}"] == 1
    assert await _recorded(services, run_id) == [("badge", "B-1")]
    run = await _run(services, run_id)
    assert run["state"] == "greeting"
    assert run["timeline"].count("step.once") == 1
    async with services.db.connection() as conn:
        details = await conn.fetchval(
            "SELECT details FROM audit_event WHERE run = $1 AND kind = 'step.once'",
            uuid.UUID(run_id),
        )
    assert (details["name"], details["value"], details["hook"]) == ("badge", "B-1", "enter")


async def test_a_decision_that_lost_the_race_for_a_name_is_decided_again_with_the_kept_value(
    step_services: container.Services,
) -> None:
    """Another writer holds the run and records ``badge`` while the operator's goto waits for
    the run; the goto read the run before that commit, so its hook makes a value of its own,
    whose write finds the name taken: the decision is rolled back whole and decided again,
    and the hook then gets the value that was committed first (``fn`` is not run again)."""
    services = step_services
    module = _module(services)
    run_id = await _start(services, "welcoming", "W-2")
    async with services.db.connection() as other:
        tx = other.transaction()
        await tx.start()
        await other.execute("SELECT id FROM run WHERE id = $1 FOR NO KEY UPDATE", uuid.UUID(run_id))
        await other.execute(
            "INSERT INTO step_once (run, name, result, recorded_at) "
            "VALUES ($1, 'badge', $2::jsonb, now())",
            uuid.UUID(run_id),
            "B-first",  # the connection encodes JSON itself
        )
        going = asyncio.create_task(_goto(services, run_id, "greeting"))
        for _ in range(3000):  # until the goto waits for the run's lock (a loaded machine)
            await other.execute("SELECT pg_stat_clear_snapshot()")  # kept per transaction
            waiting = await other.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            if waiting or going.done():
                break
            await asyncio.sleep(0.01)
        assert not going.done(), going.exception()
        assert waiting, "the goto never waited for the run"
        await tx.commit()
    await going
    assert module.SEEN[-1] == "B-first"  # what the decision that went through saw
    assert module.CALLS[f"badge:{run_id}"] == 1  # the try that lost the race, not again
    assert await _recorded(services, run_id) == [("badge", "B-first")]
    run = await _run(services, run_id)
    assert run["state"] == "greeting"
    assert run["timeline"].count("step.once") == 0  # the lost try wrote nothing


async def test_an_async_fn_in_a_hook_is_refused_and_nothing_is_recorded(
    step_services: container.Services,
) -> None:
    """A hook is synchronous: ``steps.once`` there refuses a function returning an awaitable
    (the decision then fails as for any failing hook, and changes nothing)."""
    definition = step_services.catalog.get("welcoming")

    async def later() -> str:
        return "x"

    run_id = await _start(step_services, "welcoming", "W-3")
    async with step_services.db.connection() as conn:
        found = await rows.get_run(conn, run_id)
    assert found is not None
    decision = Decision(definition, found.view, [], now=found.started_at, actor=None, new_id=str)
    in_hook = hook_once.recording(decision, "greeting", "enter")
    with in_hook, pytest.raises(hook_once.OnceNotSync):
        tf_steps.once("later", later)
    assert decision.once == {}
    assert decision.outcome().once == ()
