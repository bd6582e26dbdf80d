"""Insights count a run as failed when it is cancelled or completes in a terminal state
marked ``failure`` (``State(terminal=True, failure="rejected")``), over HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from taskflow.service.common import container
from tests.api import workflows as w
from tests.conftest import api_fixtures, gql, services_fixture

pytestmark = pytest.mark.anyio

composing = services_fixture(
    "composing",
    Path(__file__).parent / "compose_workflows.py",
    doc="Services with the compose workflows (compose-review fails in `rejected`).",
)
api, tokens = api_fixtures("composing")

ROWS = """query { insights(window: DAY, workflow: "compose-review") {
  rows { workflow finished cancelled failed failureRate } } }"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename } }"""


async def _review(api: httpx.AsyncClient, tokens: dict[str, str], doc: str, score: int) -> None:
    started = await w.start(api, tokens["app"], "compose-review", "doc", doc, {"title": doc})
    assert started["__typename"] == "StartRunSuccess", started
    slot = await w.slot_named(api, tokens["fiona"], "review", doc)
    await w.complete(api, tokens["fiona"], slot["id"], {"score": score})


async def test_a_run_ending_in_a_failure_state_counts_as_failed(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    await _review(api, tokens, "F-1", 5)  # passed: a success
    await _review(api, tokens, "F-2", 1)  # rejected: terminal, marked failure
    await _review(api, tokens, "F-3", 4)  # passed
    started = await w.start(api, tokens["app"], "compose-review", "doc", "F-4", {"title": "F-4"})
    cancel = {"input": {"runId": started["run"]["id"], "reason": "withdrawn"}}
    assert (await gql(api, CANCEL, cancel, token=tokens["max"])).ok()

    (row,) = (await gql(api, ROWS, token=tokens["max"])).ok()["insights"]["rows"]
    # Three completed, one cancelled: the rejected one and the cancelled one failed.
    assert (row["finished"], row["cancelled"], row["failed"]) == (3, 1, 2)
    assert row["failureRate"] == pytest.approx(50.0)
