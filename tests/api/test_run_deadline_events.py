"""The run deadline's events reach a real webhook receiver: the support example's ticket,
due by its contract's date, crosses its at-risk share and then its due instant; the worker
fires each timer on the injected clock and the sender delivers ``run.deadline_at_risk`` and
``run.deadline_breached``, verified with the receiver's secret."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from taskflow.service.clocks import timers as timer_service
from taskflow.service.delivery import webhook_delivery
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_webhooks_api import drain, listening
from tests.api.test_webhooks_api import settings as settings
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio


async def test_a_ticket_missing_its_contract_date_reaches_the_receiver(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock, services = world.client, world.people, world.clock, world.services
    await listening(
        client,
        people["ada"],
        receiver,
        eventTypes=["run.deadline_at_risk", "run.deadline_breached"],
        workflows=["support-ticket"],
    )
    ticket = {**w.TICKET, "due_date": "2026-12-02"}  # the end of Wednesday's London day
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-1", ticket)
    run_id = started["run"]["id"]

    # 75 % of Tue 09:00 -> Wed 17:30 (32 h 30) is Wed 09:22:30.
    frozen_clock.set(datetime(2026, 12, 2, 9, 22, 30, tzinfo=UTC))
    assert await timer_service.run_due(services, frozen_clock.now()) >= 1
    frozen_clock.set(datetime(2026, 12, 2, 17, 30, tzinfo=UTC))
    assert await timer_service.run_due(services, frozen_clock.now()) >= 1
    assert await drain(sender, frozen_clock) == 2

    events = [p for p in receiver.verified() if p["data"]["run"]["id"] == run_id]
    assert all(r.verified for r in receiver.received)
    assert [e["type"] for e in events] == ["run.deadline_at_risk", "run.deadline_breached"]
    risk, breach = (e["data"] for e in events)
    assert risk["dueAt"] == breach["dueAt"] == "2026-12-02T17:30:00+00:00"
    assert risk["atRiskAt"] == "2026-12-02T09:22:30+00:00"
    assert (risk["slot"], risk["actor"], breach["actor"]) == (None, None, None)
