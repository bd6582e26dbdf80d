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
    rows { workflow version live waitingOnPeople waitingOnSteps needingAttention
           started finished cancelled
           endToEnd { p50 p95 p99 samples fewSamples }
           endToEndBusiness { p50 p95 p99 samples fewSamples }
           breachRate failureRate regressions }
    pipeline { state live timeInState { p50 p95 samples fewSamples } reopenRate refusalRate
               pickupLatency { p50 p95 samples } pickupLatencyBusiness { p50 p95 samples } }
    funnel { state reached live completed cancelled }
  }
}"""
RELEASE = """mutation($input: ReleaseInput!) { release(input: $input) { __typename } }"""
ATTENTION = """query {
  runs(first: 100, filter: {workflow: "expense-approval", needsAttention: true}) {
  totalCount } }"""
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
    assert row["needingAttention"] == 0

    # Fifteen days on, the claim nobody touched is idle: it needs attention.
    frozen_clock.set(T0 + timedelta(days=15))
    month = {"window": "MONTH", "workflow": "expense-approval"}
    (row,) = (await gql(client, INSIGHTS, month, token=people["leah"])).ok()["insights"]["rows"]
    assert (row["live"], row["needingAttention"]) == (1, 1)


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
    assert any(line.startswith("expense-approval v1  1 1 0 0 3 1 1  2.0h") for line in printed)
    assert any("(n=1)  business 2.0h / 2.0h / 2.0h (n=1)" in line for line in printed)
    assert any(line.startswith("submitted  1  2.0h / 2.0h (n=2)  0%") for line in printed)
    assert "submitted  3  1  0  1" in printed  # the funnel: reached, live, completed, cancelled


async def test_business_time_pickup_refusals_reopens_and_the_funnel(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    """Two claims arrive at 16:00 on a Tuesday (London office hours 09:00-17:30). Fiona
    claims one at 16:30 and gives it back, then on Wednesday at 10:00 asks a question about
    it and rejects the other; Sam answers at 11:00, and Fiona rejects it at 11:30."""
    frozen_clock.set(T0 + timedelta(hours=7))
    await w.start_expense(client, people["app"], "EXP-Q-1")
    await w.start_expense(client, people["app"], "EXP-Q-2")
    frozen_clock.set(T0 + timedelta(hours=7, minutes=30))
    first = await w.slot_named(client, people["fiona"], "finance_review", "EXP-Q-1")
    await w.claim(client, people["fiona"], first["id"])
    frozen_clock.set(T0 + timedelta(hours=7, minutes=40))
    released = {"input": {"slotId": first["id"]}}
    assert (await gql(client, RELEASE, released, token=people["fiona"])).ok()
    frozen_clock.set(T0 + timedelta(hours=25))
    await w.complete(client, people["fiona"], first["id"], {"decision": "query", "comment": "?"})
    other = await w.slot_named(client, people["fiona"], "finance_review", "EXP-Q-2")
    await w.complete(client, people["fiona"], other["id"], {"decision": "reject"})
    frozen_clock.set(T0 + timedelta(hours=26))
    answer = await w.slot_named(client, people["sam"], "answer", "EXP-Q-1")
    await w.complete(client, people["sam"], answer["id"], {"answer": "a taxi"})
    frozen_clock.set(T0 + timedelta(hours=26, minutes=30))
    again = await w.slot_named(client, people["fiona"], "finance_review", "EXP-Q-1")
    await w.complete(client, people["fiona"], again["id"], {"decision": "reject"})
    frozen_clock.set(T0 + timedelta(hours=27))

    asked = {"window": "DAY", "workflow": "expense-approval"}
    found = (await gql(client, INSIGHTS, asked, token=people["leah"])).ok()["insights"]
    (row,) = found["rows"]
    assert (row["started"], row["finished"], row["cancelled"], row["live"]) == (2, 2, 0, 0)
    # End to end: 18.0 h and 19.5 h of wall time, but 2.5 h and 4.0 h of office hours
    # (16:00-17:30 on Tuesday, then 09:00 onwards on Wednesday).
    assert row["endToEnd"]["p50"] == pytest.approx(18.75 * 3600)
    assert row["endToEndBusiness"]["p50"] == pytest.approx(3.25 * 3600)
    assert row["endToEndBusiness"]["samples"] == 2
    assert row["failureRate"] == 0.0
    assert row["regressions"] == []
    attention = (await gql(client, ATTENTION, {}, token=people["max"])).ok()
    assert row["needingAttention"] == attention["runs"]["totalCount"]

    by_state = {s["state"]: s for s in found["pipeline"]}
    review = by_state["submitted"]
    # Three visits of the review ended; one of them came back after the question.
    assert review["timeInState"]["samples"] == 3
    assert review["reopenRate"] == pytest.approx(100 / 3)
    # Three review slots ended; Fiona gave one back.
    assert review["refusalRate"] == pytest.approx(100 / 3)
    # Pickup: 30 min (the claim before the give-back), 18 h wall but 2.5 h of office hours
    # (EXP-Q-2, taken up by its completion), and 30 min (the second review).
    assert review["pickupLatency"]["samples"] == 3
    assert review["pickupLatency"]["p50"] == review["pickupLatencyBusiness"]["p50"] == 1800
    assert review["pickupLatency"]["p95"] > 15 * 3600 > review["pickupLatencyBusiness"]["p95"]
    assert by_state["awaiting_answer"]["reopenRate"] == 0.0
    assert by_state["awaiting_answer"]["refusalRate"] == 0.0

    funnel = {f["state"]: f for f in found["funnel"]}
    assert funnel["submitted"] == {
        "state": "submitted",
        "reached": 2,
        "live": 0,
        "completed": 0,
        "cancelled": 0,
    }
    assert funnel["awaiting_answer"]["reached"] == 1
    assert funnel["rejected"] == {
        "state": "rejected",
        "reached": 2,
        "live": 0,
        "completed": 2,
        "cancelled": 0,
    }
    assert [f["state"] for f in found["funnel"]][-1] == "awaiting_answer"
