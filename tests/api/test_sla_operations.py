"""The SLA operations in graphql/operations/ as a frontend runs them."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import workflows as w
from tests.api.test_operations import op

pytestmark = pytest.mark.anyio


async def test_slot_clocks_and_notifications(
    client: httpx.AsyncClient, services: container.Services, people: dict[str, str]
) -> None:
    reference = "EXP-77"
    await w.start_expense(client, people["app"], reference)
    review = await w.slot_named(client, people["fiona"], "finance_review")
    clocks = (await op(client, "slot_clocks", people["fiona"], id=review["id"]))["slot"]["clocks"]
    by_milestone = {c["milestone"]: c for c in clocks}
    assert set(by_milestone) == {"assigned", "finished"}
    assigned = by_milestone["assigned"]
    assert assigned["calendar"] == "uk-london"
    assert assigned["budget"]["seconds"] == 4 * 3600
    assert assigned["status"] == "RUNNING"
    assert assigned["explain"]

    # Nobody acts on it for four days: both milestones breach (2 business days for the
    # decision), and the finance lead is told about the late decision.
    services.clock.advance(timedelta(days=4))  # type: ignore[attr-defined]
    await timers.run_due(services, services.clock.now())
    clocks = (await op(client, "slot_clocks", people["fiona"], id=review["id"]))["slot"]["clocks"]
    assert {c["milestone"]: c["status"] for c in clocks} == {
        "assigned": "BREACHED",
        "finished": "BREACHED",
    }
    mine = (await op(client, "notifications", people["leah"]))["notifications"]
    assert mine["totalCount"] >= 1
    assert {edge["node"]["slotId"] for edge in mine["edges"]} == {review["id"]}
