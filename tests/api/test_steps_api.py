"""Automatic steps over HTTP: a run started through the API runs its action on the worker's
pass; ``Run.steps`` shows attempts and errors; a parked step is listed as needing attention
and retried by an operator (``retryStep``), refused to others."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.service.common import container
from taskflow.service.steps import steps
from taskflow.service.workspaces import workspaces
from tests.api.test_workspaces_admin import acme_with_people
from tests.conftest import app_with, gql, tokens_for

pytestmark = pytest.mark.anyio

OPERATIONS = config.PROJECT_ROOT / "graphql" / "operations"
RUN_STEPS = (OPERATIONS / "run_steps.graphql").read_text()
RETRY_STEP = (OPERATIONS / "retry_step.graphql").read_text()
LIST = (OPERATIONS / "needs_attention.graphql").read_text()
WORKFLOWS = config.PROJECT_ROOT / "tests" / "integration" / "step_workflows.py"
START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename
  ... on StartRunSuccess { run { id state } }
  ... on Refusal { code message }
} }"""


step_services, api, tokens = app_with("step_services", WORKFLOWS)


async def _start(api: httpx.AsyncClient, token: str, external_id: str, **attrs: Any) -> str:
    variables = {
        "input": {
            "workflow": "charging",
            "subject": {"type": "order", "externalId": external_id, "attributes": attrs},
        }
    }
    started = (await gql(api, START, variables, token=token)).ok()["startRun"]
    assert started["run"]["state"] == "charge"
    return str(started["run"]["id"])


async def _run(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(api, RUN_STEPS, {"id": run_id}, token=token)).ok()["run"]
    return found


async def test_a_run_started_over_http_runs_its_action_and_shows_the_attempts(
    api: httpx.AsyncClient, step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    tokens = tokens_for(step_services)
    run_id = await _start(api, tokens["app"], "H-1", amount=250, plan=["boom", "ok"])
    await steps.run_due(step_services, frozen_clock.now())
    run = await _run(api, tokens["ada"], run_id)
    [step] = run["steps"]
    assert (run["state"], step["status"], step["attemptCount"]) == ("charge", "DUE", 1)
    assert step["attempts"][0]["errorClass"] == "Flaky"

    frozen_clock.advance(timedelta(minutes=1))
    await steps.run_due(step_services, frozen_clock.now())
    run = await _run(api, tokens["ada"], run_id)
    [step] = run["steps"]
    assert (run["state"], run["status"]) == ("large", "COMPLETED")
    assert step["status"] == "SUCCEEDED"
    assert step["result"]["amount"] == 250
    assert [a["outcome"] for a in step["attempts"]] == ["failed", "succeeded"]
    # Someone who may not read the run sees nothing of it.
    hidden = await gql(api, RUN_STEPS, {"id": run_id}, token=tokens["sid"])
    assert hidden.data is not None
    assert hidden.data["run"] is None


async def test_a_parked_step_needs_attention_and_only_an_operator_retries_it(
    api: httpx.AsyncClient, step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    tokens = tokens_for(step_services)
    run_id = await _start(api, tokens["app"], "H-2", plan=["boom"])
    for _ in range(3):
        await steps.run_due(step_services, frozen_clock.now())
        frozen_clock.advance(timedelta(minutes=1))
    [step] = (await _run(api, tokens["ada"], run_id))["steps"]
    assert (step["status"], step["attemptCount"]) == ("PARKED", 3)
    listed = (await gql(api, LIST, {"first": 50}, token=tokens["ada"])).ok()["needsAttention"]
    reasons = {e["node"]["reason"] for e in listed["edges"]}
    assert "STEP_PARKED" in reasons

    refused = await gql(api, RETRY_STEP, {"stepId": step["id"]}, token=tokens["sam"])
    assert refused.ok()["retryStep"]["__typename"] in ("NotAllowed", "NotFoundRefusal")
    retried = (await gql(api, RETRY_STEP, {"stepId": step["id"]}, token=tokens["ada"])).ok()
    assert retried["retryStep"]["__typename"] == "RetryStepSuccess"
    assert retried["retryStep"]["step"]["status"] == "DUE"
    again = (await gql(api, RETRY_STEP, {"stepId": step["id"]}, token=tokens["ada"])).ok()
    assert again["retryStep"]["code"] == "STEP_NOT_PARKED"
    bad = (await gql(api, RETRY_STEP, {"stepId": "U3RlcDo5OTk"}, token=tokens["ada"])).ok()
    assert bad["retryStep"]["__typename"] == "NotFoundRefusal"


NODE = """query($id: ID!) { node(id: $id) {
  __typename id
  ... on Step { key status attemptCount attempts { outcome } }
} }"""


async def test_a_step_is_a_node_seen_by_whoever_may_read_its_run(
    api: httpx.AsyncClient, step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    tokens = tokens_for(step_services)
    run_id = await _start(api, tokens["app"], "H-3", amount=10, plan=["ok"])
    await steps.run_due(step_services, frozen_clock.now())
    [step] = (await _run(api, tokens["ada"], run_id))["steps"]
    found = (await gql(api, NODE, {"id": step["id"]}, token=tokens["ada"])).ok()["node"]
    assert found["__typename"] == "Step"
    assert (found["id"], found["status"], found["attemptCount"]) == (step["id"], "SUCCEEDED", 1)
    assert [a["outcome"] for a in found["attempts"]] == ["succeeded"]
    # Someone who may not read the run gets null, as for an id that does not exist.
    hidden = (await gql(api, NODE, {"id": step["id"]}, token=tokens["sid"])).ok()
    assert hidden["node"] is None
    missing = (await gql(api, NODE, {"id": "U3RlcDo5OTk5OQ"}, token=tokens["ada"])).ok()
    assert missing["node"] is None


TIMELINE = (OPERATIONS / "run_timeline.graphql").read_text()
GOTO = (OPERATIONS / "goto.graphql").read_text()


async def test_what_a_hook_recorded_once_is_on_the_run_timeline_over_graphql(
    api: httpx.AsyncClient, step_services: container.Services
) -> None:
    """An operator moves a run into a state whose enter hook calls ``steps.once``: the value
    is on the timeline (``step.once``), where an action's once-values are shown too."""
    tokens = tokens_for(step_services)
    variables = {
        "input": {
            "workflow": "welcoming",
            "subject": {"type": "order", "externalId": "H-4", "attributes": {}},
        }
    }
    started = (await gql(api, START, variables, token=tokens["app"])).ok()["startRun"]
    run_id = started["run"]["id"]
    for state in ("greeting", "arriving", "greeting"):
        moved = (
            await gql(
                api,
                GOTO,
                {"input": {"runId": run_id, "state": state, "reason": "by hand"}},
                token=tokens["ada"],
            )
        ).ok()["goto"]
        assert moved["__typename"] == "RunSuccess", moved
    run = (await gql(api, TIMELINE, {"id": run_id}, token=tokens["ada"])).ok()["run"]
    lines = [e["node"] for e in run["timeline"]["edges"] if e["node"]["kind"] == "step.once"]
    assert len(lines) == 1  # recorded when first entered, read back when entered again
    details = lines[0]["details"]
    assert (details["name"], details["hook"], details["state"]) == ("badge", "enter", "greeting")
    assert str(details["value"]).startswith("B-")


async def test_a_suspended_workspaces_steps_wait_and_run_on_resume(
    api: httpx.AsyncClient, step_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """The worker's step pass takes nothing of a suspended workspace (docs/workspaces.md);
    resumed, the step runs at the next pass, as it would have."""
    acme, _ = await acme_with_people(step_services)
    app = step_services.staff_tokens.mint("acme-app", frozen_clock.now())
    ada = step_services.staff_tokens.mint("acme-ada", frozen_clock.now())
    run_id = await _start(api, app, "W-1", amount=250, plan=["ok"])
    await workspaces.set_status(step_services, acme, "suspended")
    await steps.run_due(step_services, frozen_clock.now() + timedelta(hours=1))
    await workspaces.set_status(step_services, acme, "active")
    [step] = (await _run(api, ada, run_id))["steps"]
    assert (step["status"], step["attemptCount"]) == ("DUE", 0)
    await steps.run_due(step_services, frozen_clock.now() + timedelta(hours=1))
    run = await _run(api, ada, run_id)
    assert (run["state"], run["status"], run["steps"][0]["status"]) == (
        "large", "COMPLETED", "SUCCEEDED",
    )  # fmt: skip
