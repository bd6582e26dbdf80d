"""Insights count a run as failed when it is cancelled or completes in a terminal state
marked ``failure`` (``State(terminal=True, failure="rejected")``), and flag a version whose
failure rate rose, in GraphQL and on the report page, over HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.compose import children as lane
from tests.api import workflows as w
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

composing, api, tokens = app_with("composing", Path(__file__).parent / "compose_workflows.py")

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


START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on StartRunSuccess { run { id } } } }"""
VERSIONS = """query { insights(window: DAY, workflow: "compose-moving") {
  rows { version finished cancelled failed failureRate regressions } } }"""


async def _moving(api: httpx.AsyncClient, token: str, doc: str, version: int) -> str:
    subject = {"type": "doc", "externalId": doc, "attributes": {"title": doc}}
    started = await gql(
        api,
        START,
        {"input": {"workflow": "compose-moving", "subject": subject, "version": version}},
        token=token,
    )
    return str(started.ok()["startRun"]["run"]["id"])


async def test_a_version_whose_failure_rate_rose_is_flagged_on_the_report_page(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    # Version 1: its run waits on a review that passes, and completes.
    await _moving(api, tokens["app"], "M-1", 1)
    while await lane.run_due(composing):
        pass
    slot = await w.slot_named(api, tokens["fiona"], "review", "M-1")
    await w.complete(api, tokens["fiona"], slot["id"], {"score": 5})
    while await lane.run_due(composing):
        pass
    # Version 2: its run is cancelled.
    second = await _moving(api, tokens["app"], "M-2", 2)
    cancel = {"input": {"runId": second, "reason": "withdrawn"}}
    assert (await gql(api, CANCEL, cancel, token=tokens["max"])).ok()

    rows = (await gql(api, VERSIONS, token=tokens["max"])).ok()["insights"]["rows"]
    assert [(r["version"], r["finished"], r["failed"]) for r in rows] == [(2, 0, 1), (1, 1, 0)]
    assert rows[0]["regressions"] == ["failure rate +100.0 points over v1"]

    page = await api.get(
        "/reports/sla",
        params={"insights": "24h"},
        headers={"Authorization": f"Bearer {tokens['max']}"},
    )
    assert page.status_code == 200
    section = page.text[page.text.index('<h2 id="insights">') :]
    flagged = section[section.index('<tr class="regression">') :]
    flagged = flagged[: flagged.index("</tr>")]
    assert '<td class="key">compose-moving</td><td class="key">v2</td>' in flagged
    assert "<b>REGRESSION</b> failure rate +100.0 points over v1" in flagged
