"""The worker fires a clock's ``at_risk`` timer on the injected clock: one ``clock.at_risk``
line on the timeline, in business time, once, and nothing else changes (issue 19)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.integration.starting import start_escalating

pytestmark = pytest.mark.anyio


async def _state(services: container.Services, run_id: str) -> dict[str, Any]:
    async with services.db.connection() as conn:
        slot = await conn.fetchrow(
            "SELECT name, status, holder, priority, version, due_at FROM slot"
        )
        lines = await conn.fetch(
            "SELECT kind, slot, actor, details FROM audit_event WHERE run = $1 ORDER BY id",
            uuid.UUID(run_id),
        )
        notes = await conn.fetchval("SELECT count(*) FROM notification")
        armed = await conn.fetch(
            "SELECT kind, status FROM timer WHERE run = $1 ORDER BY kind", uuid.UUID(run_id)
        )
    return {
        "slot": dict(slot),
        "lines": [dict(r) for r in lines],
        "notes": notes,
        "timers": {r["kind"]: r["status"] for r in armed},
    }


async def test_the_worker_writes_clock_at_risk_at_the_share_in_business_time_once(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = sla_services
    # Tuesday 16:00, two business hours (London, to 17:30 then from 09:00): 75 % is 1 h 30,
    # so at risk at 17:30 Tuesday; due Wednesday 09:30. The 50 % reminder fires at 17:00.
    frozen_clock.set(datetime(2026, 12, 1, 16, tzinfo=UTC))
    run, slot_id = await start_escalating(services, "AR-1")
    at_risk = datetime(2026, 12, 1, 17, 30, tzinfo=UTC)
    frozen_clock.set(datetime(2026, 12, 1, 17, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) == 1  # the reminder
    frozen_clock.set(at_risk - timedelta(seconds=1))
    assert await timers.run_due(services, frozen_clock.now()) == 0
    before = await _state(services, run.id)
    assert before["timers"]["at_risk"] == "armed"

    frozen_clock.set(at_risk)
    assert await timers.run_due(services, frozen_clock.now()) == 1
    after = await _state(services, run.id)
    [line] = after["lines"][len(before["lines"]) :]
    assert (line["kind"], str(line["slot"]), line["actor"]) == ("clock.at_risk", slot_id, None)
    details = line["details"]
    assert details["slot"] == before["slot"]["name"]
    assert details["milestone"] == "finished"
    assert details["at_risk_at"] == "2026-12-01T17:30:00+00:00"
    assert details["due_at"] == "2026-12-02T09:30:00+00:00"
    # Nothing else changes: the slot row, the notifications, the breach timer still armed.
    assert after["slot"] == before["slot"]
    assert after["notes"] == before["notes"]
    assert after["timers"] == {**before["timers"], "at_risk": "fired"}
    # Once: a later pass has nothing more to fire until the breach.
    frozen_clock.set(at_risk + timedelta(minutes=10))
    assert await timers.run_due(services, frozen_clock.now()) == 0
