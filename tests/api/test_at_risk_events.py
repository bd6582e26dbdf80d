"""``clock.at_risk`` reaches a real webhook receiver: the worker fires a clock's at-risk
timer on the injected clock, the timeline gains the line, the trigger makes the event and
the sender delivers it, verified with the ``standardwebhooks`` library (issue 19)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers as timer_service
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_webhooks_api import drain, listening
from tests.api.test_webhooks_api import settings as settings
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio


async def _timers(services: container.Services, run_id: str) -> list[dict[str, Any]]:
    local = uuid.UUID(relay.from_global_id(run_id)[1])
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT t.kind, t.part, t.status, t.due_at, k.due_at AS clock_due FROM timer t "
            "JOIN sla_clock k ON k.slot = t.slot AND k.milestone = t.part "
            "WHERE t.run = $1 AND t.kind IN ('at_risk', 'breach') ORDER BY t.due_at, t.kind",
            local,
        )
    return [dict(r) for r in rows]


async def test_a_clock_past_its_at_risk_share_reaches_the_receiver_and_nothing_else_changes(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock, services = world.client, world.people, world.clock, world.services
    await listening(
        client,
        people["leah"],
        receiver,
        eventTypes=["clock.at_risk"],
        workflows=["expense-approval"],
    )
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-9", w.EXPENSE
    )
    run_id = started["run"]["id"]
    armed = await _timers(services, run_id)
    risky = [t for t in armed if t["kind"] == "at_risk"]
    assert {t["part"] for t in risky} == {"assigned", "finished"}
    first = risky[0]
    breach = next(t for t in armed if t["kind"] == "breach" and t["part"] == first["part"])
    assert first["due_at"] < breach["due_at"] == first["clock_due"]

    # A second before: nothing fires; at the instant: the at-risk timer alone.
    review = await w.slot_named(client, people["fiona"], "finance_review")
    frozen_clock.set(first["due_at"] - timedelta(seconds=1))
    assert await timer_service.run_due(services, frozen_clock.now()) == 0
    frozen_clock.set(first["due_at"])
    assert await timer_service.run_due(services, frozen_clock.now()) == 1
    assert await drain(sender, frozen_clock) == 1

    [event] = [p for p in receiver.verified() if p["data"]["run"]["id"] == run_id]
    assert all(r.verified for r in receiver.received)
    assert event["type"] == "clock.at_risk"
    data = event["data"]
    assert data["slot"]["name"] == "finance_review"
    assert relay.from_global_id(data["slot"]["id"])[0] == "Slot"
    assert data["milestone"] == first["part"]
    assert datetime.fromisoformat(data["dueAt"]) == first["clock_due"]
    assert datetime.fromisoformat(data["atRiskAt"]) == first["due_at"]
    assert data["actor"] is None

    # Nothing else changed: the slot is as it was, its breach timer still armed.
    after = await w.slot_named(client, people["fiona"], "finance_review")
    assert (after["status"], after["version"], after["holder"]) == (
        review["status"],
        review["version"],
        review["holder"],
    )
    states = {(t["kind"], t["part"]): t["status"] for t in await _timers(services, run_id)}
    assert states[("at_risk", first["part"])] == "fired"
    assert states[("breach", first["part"])] == "armed"
