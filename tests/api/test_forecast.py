"""The breach forecast over HTTP (``Slot.breachRisk``) and ``taskflow forecast backtest``, on
the demo's five weeks of history with a moved clock (docs/forecast.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.cli import forecast_cmd
from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
from taskflow.service.common.container import Services
from taskflow.service.operate import demo
from taskflow.service.reports import forecast
from tests.api import workflows as w
from tests.conftest import gql, with_settings

pytestmark = pytest.mark.anyio

WORK = """query { work(first: 100) { edges { node { id name workflow state status
  breachRisk { probability atRisk reason cohort samples breached history shareElapsed
               hourBand load queue } } } } }"""
INBOX = """query { inbox(first: 100) { edges { node { id name breachRisk { probability reason } }
  } } }"""


async def _demo(services: Services) -> None:
    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)


def _nodes(answer: dict[str, Any], field: str) -> list[dict[str, Any]]:
    return [e["node"] for e in answer[field]["edges"]]


async def test_live_slots_carry_a_forecast_with_its_reason(
    client: httpx.AsyncClient, services: Services, frozen_clock: clock.FrozenClock
) -> None:
    await _demo(services)
    token = services.staff_tokens.mint("max", frozen_clock.now())
    slots = _nodes((await gql(client, WORK, {}, token=token)).ok(), "work")
    risks = [s["breachRisk"] for s in slots if s["breachRisk"] is not None]
    assert risks, "the demo leaves live slots with clocks"
    answered = [r for r in risks if r["probability"] is not None]
    assert answered, "the demo's history is enough for some"
    for r in answered:
        assert 0 <= r["probability"] <= 1
        assert r["atRisk"] == (r["probability"] >= 0.5)
        assert r["breached"] <= r["samples"] <= r["history"]
        if r["shareElapsed"] >= 1:
            assert (r["probability"], r["cohort"]) == (1.0, "breached")
            assert r["reason"].startswith("past its due instant")
        elif r["samples"]:
            assert f"{r['breached']} of {r['samples']} past slots" in r["reason"]
        assert r["load"] in ("busy", "quiet")
    for r in risks:
        if r["probability"] is None:
            assert r["reason"].startswith("not enough history")

    # The same slot read later, further into its budget: the share grows, the reason follows.
    frozen_clock.advance(timedelta(hours=2))
    later = _nodes((await gql(client, WORK, {}, token=token)).ok(), "work")
    before = {s["id"]: s["breachRisk"] for s in slots if s["breachRisk"]}
    after = {s["id"]: s["breachRisk"] for s in later if s["breachRisk"]}
    common = [i for i in before if i in after]
    assert common
    assert all(after[i]["shareElapsed"] > before[i]["shareElapsed"] for i in common)


async def test_breach_risk_is_seen_exactly_where_the_slot_is(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    """A candidate reads the forecast on the slots of their inbox; a stranger sees no slot."""
    run = (await w.start_expense(client, people["app"], "EXP-F-1"))["run"]
    assert run["id"]
    fiona = _nodes((await gql(client, INBOX, {}, token=people["fiona"])).ok(), "inbox")
    review = next(s for s in fiona if s["name"] == "finance_review")
    # No past slot of this name: the forecast says so instead of guessing.
    assert review["breachRisk"]["probability"] is None
    assert review["breachRisk"]["reason"].startswith("not enough history: 0 past slots")
    sam = _nodes((await gql(client, INBOX, {}, token=people["sam"])).ok(), "inbox")
    assert all(s["id"] != review["id"] for s in sam)


async def test_backtest_on_the_demo_prints_precision_and_recall(
    services: Services, frozen_clock: clock.FrozenClock, capsys: pytest.CaptureFixture[str]
) -> None:
    await _demo(services)
    found = await forecast.backtest(services, forecast_cmd.OPERATOR, weeks=5)
    printed = forecast_cmd.lines(found, 0.5)
    print("\n".join(printed))
    assert found.forecast > 0
    assert found.true_positive + found.false_negative > 0, "the demo has breaches"
    assert printed[-1].startswith("precision ")
    assert found.precision is not None
    assert found.recall is not None
    # Refused for someone who reads no reports.
    from taskflow import errors
    from taskflow.core.access import principals

    nobody = principals.Principal(id="sam", display_name="Sam", roles=())
    with pytest.raises(errors.Forbidden):
        await forecast.backtest(services, nobody, weeks=5)


RANKED = """query($after: String) { work(first: 5, after: $after, orderBy: BREACH_RISK) {
  totalCount pageInfo { hasNextPage endCursor }
  edges { node { id breachRisk { probability } } } } }"""


async def test_work_ordered_by_breach_risk_ranks_the_likeliest_first(
    client: httpx.AsyncClient, services: Services, frozen_clock: clock.FrozenClock
) -> None:
    await _demo(services)
    token = services.staff_tokens.mint("max", frozen_clock.now())
    seen: list[dict[str, Any]] = []
    after = None
    while True:
        found = (await gql(client, RANKED, {"after": after}, token=token)).ok()["work"]
        seen.extend(e["node"] for e in found["edges"])
        if not found["pageInfo"]["hasNextPage"]:
            break
        after = found["pageInfo"]["endCursor"]
    assert len(seen) == found["totalCount"] == len({s["id"] for s in seen})
    ranks = [s["breachRisk"]["probability"] if s["breachRisk"] else None for s in seen]
    known = [p for p in ranks if p is not None]
    assert known == sorted(known, reverse=True)
    assert ranks[: len(known)] == known, "slots without a forecast come last"
    both = """query { work(filter: {atRisk: true}, orderBy: BREACH_RISK) { totalCount } }"""
    refused = await gql(client, both, {}, token=token)
    assert refused.error_codes == ["INVALID_INPUT"]


async def test_the_history_needed_is_a_setting(
    services: Services, frozen_clock: clock.FrozenClock
) -> None:

    from taskflow.core.slots.filters import SlotFilter

    await _demo(services)
    strict = with_settings(services, forecast_min_history=10_000)
    ranked, total = await forecast.work_by_breach_risk(strict, forecast_cmd.OPERATOR, SlotFilter())
    risks = [r for _, r in ranked if r is not None and r.cohort != "breached"]
    assert risks
    assert total == len(ranked)
    assert all(r.probability is None for r in risks)
    assert all("10000 needed" in r.reason for r in risks)


def test_the_command_refuses_bad_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    from taskflow.cli import main

    assert main(["forecast", "backtest", "--weeks", "0"]) == 1
    assert "--weeks must be 1 or more" in capsys.readouterr().err
    assert main(["forecast", "backtest", "--threshold", "2"]) == 1
    assert "--threshold must be between 0 and 1" in capsys.readouterr().err
