"""Awaited starts over HTTP: ``StartRunInput.waitFor`` / ``timeoutSeconds``.

``screened`` starts in an automatic step the worker runs; a start waiting for its first slot
answers once the worker moved it (woken by the timeline trigger's notification, not a poll),
holding no pool connection while it waits. Bounds outside 1..30 seconds are refused and
start nothing.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.common import container
from taskflow.service.runs import awaited
from taskflow.service.steps import steps
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent

start_services, api, tokens = app_with("start_services", HERE / "start_workflows.py")

START = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename
  ... on StartRunSuccess { created reached run { id state status slots { name status } } }
  ... on Refusal { code message } } }"""
STEPS = """query($id: ID!) { run(id: $id) { steps { result } } }"""
RUNS = """query { runs(first: 10, filter: {workflow: "screened"}) { totalCount } }"""


async def _start(client: httpx.AsyncClient, token: str, ref: str, **wait: Any) -> dict[str, Any]:
    variables = {
        "input": {
            "workflow": "screened",
            "subject": {"type": "applicant", "externalId": ref, "attributes": {"name": ref}},
            **wait,
        }
    }
    answer: dict[str, Any] = (await gql(client, START, variables, token=token)).ok()["startRun"]
    return answer


@pytest.fixture
def no_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiters wake only on notifications (a missed one would wait out the whole bound)."""
    monkeypatch.setattr(awaited, "POLL", 60.0)


async def test_a_start_waiting_for_a_slot_answers_once_the_worker_moved_the_run(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    start_services: container.Services,
    frozen_clock: clock.FrozenClock,
    no_poll: None,
) -> None:
    pool = start_services.db.pool
    seen: dict[str, int] = {}

    async def worker() -> None:
        await asyncio.sleep(0.3)  # the start has answered to itself and waits
        seen["borrowed while waiting"] = pool.get_size() - pool.get_idle_size()
        await steps.run_due(start_services, frozen_clock.now())

    began = time.monotonic()
    answer, _ = await asyncio.gather(
        _start(api, tokens["app"], "A-1", waitFor="SLOT", timeoutSeconds=20), worker()
    )
    waited = time.monotonic() - began
    assert answer["__typename"] == "StartRunSuccess"
    assert answer["reached"] is True
    run = answer["run"]
    assert run["state"] == "interview"
    assert run["slots"] == [{"name": "interview", "status": "OPEN"}]
    # The step's action and route read the step as the actor.
    found = await gql(api, STEPS, {"id": run["id"]}, token=tokens["app"])
    (step,) = found.ok()["run"]["steps"]
    assert step["result"]["kind"] == "automation"
    assert step["result"]["by"].startswith("automation:")
    assert 0.3 <= waited < 5  # woken by the worker's commit, long before the bound
    assert seen["borrowed while waiting"] == 0


async def test_a_wait_that_times_out_answers_the_run_as_it_stands(
    api: httpx.AsyncClient, tokens: dict[str, str], no_poll: None
) -> None:
    began = time.monotonic()
    answer = await _start(api, tokens["app"], "A-2", waitFor="END", timeoutSeconds=1)
    assert time.monotonic() - began >= 1
    assert answer["reached"] is False
    assert (answer["run"]["state"], answer["run"]["status"]) == ("screening", "ACTIVE")


async def test_a_start_already_there_answers_at_once_and_without_wait_reached_is_null(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    start_services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    plain = await _start(api, tokens["app"], "A-3")
    assert plain["reached"] is None  # no wait asked
    assert plain["run"]["state"] == "screening"
    began = time.monotonic()
    # four-eyes opens its slot as it starts: a SLOT wait is met at once.
    variables = {
        "input": {
            "workflow": "four-eyes",
            "subject": {"type": "request", "externalId": "R-9", "attributes": {"x": 1}},
            "waitFor": "SLOT",
            "timeoutSeconds": 30,
        }
    }
    answer = (await gql(api, START, variables, token=tokens["app"])).ok()["startRun"]
    assert answer["reached"] is True
    assert answer["run"]["slots"] == [{"name": "approve", "status": "OPEN"}]
    assert time.monotonic() - began < 5


@pytest.mark.parametrize(
    ("wait", "field"),
    [
        ({"waitFor": "SLOT", "timeoutSeconds": 31}, "timeoutSeconds"),
        ({"waitFor": "SLOT", "timeoutSeconds": 0}, "timeoutSeconds"),
        ({"timeoutSeconds": 5}, "timeoutSeconds"),
    ],
)
async def test_a_bound_out_of_range_is_refused_and_starts_nothing(
    api: httpx.AsyncClient, tokens: dict[str, str], wait: dict[str, Any], field: str
) -> None:
    refused = await _start(api, tokens["app"], "A-4", **wait)
    assert refused["__typename"] == "InvalidInput"
    assert field in refused["message"]
    assert (await gql(api, RUNS, token=tokens["app"])).ok()["runs"]["totalCount"] == 0


async def test_one_answer_may_read_a_runs_slots_and_steps_together(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    # Two resolvers of one run load its access answer at once; neither may read the other's
    # half-made entry as "not found".
    both = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename
      ... on StartRunSuccess { run { state slots { name } steps { state status } } } } }"""
    variables = {
        "input": {
            "workflow": "screened",
            "subject": {"type": "applicant", "externalId": "B-1", "attributes": {"name": "B"}},
        }
    }
    found = await gql(api, both, variables, token=tokens["app"])
    run = found.ok()["startRun"]["run"]
    assert run["state"] == "screening"
    assert run["slots"] == []
    assert [s["state"] for s in run["steps"]] == ["screening"]


async def test_with_the_poll_scheduler_an_awaited_start_listens_to_nothing_and_still_answers(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    start_services: container.Services,
    frozen_clock: clock.FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # TASKFLOW_SCHEDULER=poll: the process opens no LISTEN connection (a pooled database
    # with no direct URL); the waiter re-reads its run every POLL seconds instead.
    monkeypatch.setattr(start_services.db, "listening", False)
    monkeypatch.setattr(awaited, "POLL", 0.2)
    seen: dict[str, int] = {}

    async def worker() -> None:
        await asyncio.sleep(0.3)  # the start waits
        async with start_services.db.connection() as conn:
            seen["listening while waiting"] = await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        await steps.run_due(start_services, frozen_clock.now())

    answer, _ = await asyncio.gather(
        _start(api, tokens["app"], "P-1", waitFor="SLOT", timeoutSeconds=20), worker()
    )
    assert answer["reached"] is True
    assert answer["run"]["slots"] == [{"name": "interview", "status": "OPEN"}]
    assert seen["listening while waiting"] == 0
