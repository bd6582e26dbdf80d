"""Workflow insights over HTTP (``insights``) and on the command line (``taskflow insights``):
live runs, started / finished / cancelled in the window, end-to-end percentiles with their
sample size, the pipeline per state, and who may read them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.cli import insights_cmd
from taskflow.service.common.container import Services
from taskflow.service.history import insights
from tests.api import workflows as w
from tests.conftest import T0, gql

pytestmark = pytest.mark.anyio

INSIGHTS = """query($window: InsightsWindow, $workflow: String) {
  insights(window: $window, workflow: $workflow) {
    since until
    rows { workflow version live waitingOnPeople waitingOnSteps started finished cancelled
           endToEnd { p50 p95 p99 samples fewSamples } }
    pipeline { state live timeInState { p50 p95 samples fewSamples } }
  }
}"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename } }"""


async def _three_runs(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    """At T0 three expenses start; at T0+2h one is rejected (completed), one cancelled."""
    await w.start_expense(client, people["app"], "EXP-I-1")
    await w.start_expense(client, people["app"], "EXP-I-2")
    third = (await w.start_expense(client, people["app"], "EXP-I-3"))["run"]["id"]
    frozen_clock.set(T0 + timedelta(hours=2))
    review = await w.slot_named(client, people["fiona"], "finance_review", "EXP-I-1")
    done = await w.complete(client, people["fiona"], review["id"], {"decision": "reject"})
    assert done["run"]["status"] == "COMPLETED"
    cancel = {"input": {"runId": third, "reason": "duplicate"}}
    assert (await gql(client, CANCEL, cancel, token=people["max"])).ok()
    frozen_clock.set(T0 + timedelta(hours=3))


async def test_a_workflows_insights_and_pipeline(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    await _three_runs(client, people, frozen_clock)
    asked = {"window": "DAY", "workflow": "expense-approval"}
    found = (await gql(client, INSIGHTS, asked, token=people["leah"])).ok()["insights"]
    (row,) = found["rows"]
    assert row["workflow"] == "expense-approval"
    assert (row["live"], row["started"], row["finished"], row["cancelled"]) == (1, 3, 1, 1)
    assert row["waitingOnPeople"] == 1
    assert row["waitingOnSteps"] == 0
    e2e = row["endToEnd"]
    assert e2e["p50"] == e2e["p95"] == e2e["p99"] == 2 * 3600
    assert e2e["samples"] == 1
    assert e2e["fewSamples"] is True
    by_state = {s["state"]: s for s in found["pipeline"]}
    assert by_state["submitted"]["live"] == 1
    # Two visits of submitted ended in the window, both after two hours.
    assert by_state["submitted"]["timeInState"] == {
        "p50": 7200.0,
        "p95": 7200.0,
        "samples": 2,
        "fewSamples": True,
    }

    # An hour's window holds no start nor end: the runs started three hours ago, ended two.
    frozen_clock.set(T0 + timedelta(hours=3, minutes=1))
    hour = {"window": "HOUR", "workflow": "expense-approval"}
    (row,) = (await gql(client, INSIGHTS, hour, token=people["leah"])).ok()["insights"]["rows"]
    assert (row["live"], row["started"], row["finished"]) == (1, 0, 0)
    assert row["endToEnd"]["p50"] is None


async def test_insights_keep_to_whole_workflow_grants(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    await _three_runs(client, people, frozen_clock)
    await w.start(client, people["app"], "vendor-onboarding", "vendor", "V-I", w.VENDOR)
    leah = (await gql(client, INSIGHTS, {}, token=people["leah"])).ok()["insights"]
    assert {r["workflow"] for r in leah["rows"]} == {"expense-approval"}
    assert leah["pipeline"] is None
    everyone = (await gql(client, INSIGHTS, {}, token=people["max"])).ok()["insights"]
    assert {r["workflow"] for r in everyone["rows"]} >= {"expense-approval", "vendor-onboarding"}
    for who, workflow in (("sam", None), ("leah", "vendor-onboarding"), ("tara", "support-ticket")):
        refused = await gql(client, INSIGHTS, {"workflow": workflow}, token=people[who])
        assert refused.error_codes == ["FORBIDDEN"], who


async def test_the_command_prints_rows_and_flags_few_samples(
    client: httpx.AsyncClient,
    people: dict[str, str],
    frozen_clock: clock.FrozenClock,
    services: Services,
) -> None:
    await _three_runs(client, people, frozen_clock)
    found = await insights.insights(services, insights_cmd.OPERATOR, "7d", "expense-approval")
    printed: list[Any] = insights_cmd.lines(found)
    assert any(line.startswith("expense-approval v1  1 1 0 3 1 1  2.0h") for line in printed)
    assert any("(n=1)" in line for line in printed)
    assert any(line.startswith("submitted  1  2.0h / 2.0h (n=2)") for line in printed)
