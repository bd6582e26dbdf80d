"""Firing effects against PostgreSQL: a breach escalation that reassigns; quiet hours."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from taskflow import clock
from taskflow.core.access.principals import INTEGRATION, Grant, Principal
from taskflow.core.runs.model import RunView
from taskflow.service.access import principals as principal_service
from taskflow.service.access import working_hours
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from tests.integration.starting import start_escalating

pytestmark = pytest.mark.anyio


@pytest.fixture
async def fiona(sla_services: container.Services) -> Principal:
    """Fiona of finance, as the services know her."""
    found = await principal_service.get(sla_services, "fiona")
    assert found is not None
    return found


async def claimed_tuesday_16(
    services: container.Services, frozen_clock: clock.FrozenClock, fiona: Principal, ref: str
) -> tuple[RunView, str]:
    """An escalating run opened Tuesday 16:00 and claimed by Fiona: two business hours run
    to Wednesday 09:30; half of it is 17:00."""
    frozen_clock.set(datetime(2026, 12, 1, 16, tzinfo=UTC))
    run, slot_id = await start_escalating(services, ref)
    await slot_service.claim(services, fiona, slot_id, None)
    return run, slot_id


async def test_a_breach_reassigns_raises_priority_and_quiet_hours_defer_a_reminder(
    sla_services: container.Services, frozen_clock: clock.FrozenClock, fiona: Principal
) -> None:
    services = sla_services
    run, _ = await claimed_tuesday_16(services, frozen_clock, fiona, "R-1")

    # 17:00: half the budget. Fiona's calendar (uk-london) is open: delivered now.
    frozen_clock.set(datetime(2026, 12, 1, 17, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) == 1
    # Breach: Wednesday 09:30. The reminder to Leah is at once (no quiet hours for it);
    # the at-risk timer (75 %: Tuesday 17:30) fires in the same pass.
    frozen_clock.set(datetime(2026, 12, 2, 9, 30, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) == 3
    async with services.db.connection() as conn:
        slot = await conn.fetchrow("SELECT status, holder, priority, due_at FROM slot")
        notes = await conn.fetch(
            "SELECT recipient, created_at, deliver_at FROM notification ORDER BY id"
        )
        kinds = [
            r["kind"]
            for r in await conn.fetch(
                "SELECT kind FROM audit_event WHERE run = $1 ORDER BY id", uuid.UUID(run.id)
            )
        ]
    assert (slot["status"], slot["holder"], slot["priority"]) == ("claimed", "leah", 1)
    assert [(n["recipient"], n["deliver_at"] == n["created_at"]) for n in notes] == [
        ("fiona", True),
        ("leah", True),
    ]
    for kind in (
        "reminder.fired",
        "clock.at_risk",
        "clock.breached",
        "slot.reassigned",
        "slot.priority_raised",
    ):
        assert kind in kinds, kind


async def test_a_breach_does_not_hand_the_slot_to_someone_on_leave_and_says_why(
    sla_services: container.Services, frozen_clock: clock.FrozenClock, fiona: Principal
) -> None:
    services = sla_services
    run, _ = await claimed_tuesday_16(services, frozen_clock, fiona, "R-L")
    leah = await principal_service.get(services, "leah")
    assert leah is not None
    away = (datetime(2026, 12, 2, 0, tzinfo=UTC), datetime(2026, 12, 3, 0, tzinfo=UTC))
    await working_hours.add_leave(services, leah, "leah", *away, "training")
    # The breach (Wednesday 09:30) names Leah, away all Wednesday: Fiona keeps the slot,
    # the priority still rises, and the timeline says why it was not handed over.
    frozen_clock.set(datetime(2026, 12, 2, 9, 30, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) >= 1
    async with services.db.connection() as conn:
        slot = await conn.fetchrow("SELECT status, holder, priority FROM slot")
        skipped = await conn.fetchrow(
            "SELECT reason, details FROM audit_event WHERE run = $1 AND kind = "
            "'slot.reassign_skipped'",
            uuid.UUID(run.id),
        )
        reassigned = await conn.fetchval(
            "SELECT count(*) FROM audit_event WHERE kind = 'slot.reassigned'"
        )
    assert (slot["status"], slot["holder"], slot["priority"]) == ("claimed", "fiona", 1)
    assert reassigned == 0
    assert skipped["details"]["to"] == "leah"
    assert skipped["details"]["on_leave"] is True
    assert skipped["details"]["leave_to"] == away[1].isoformat()
    assert "leah is on leave until 2026-12-03T00:00:00+00:00" in skipped["reason"]


async def test_a_reminder_outside_the_recipients_hours_waits_for_their_next_opening(
    sla_services: container.Services, frozen_clock: clock.FrozenClock, fiona: Principal
) -> None:
    services = sla_services
    # Friday 17:00: an hour of the budget is left at 17:30; half of it falls at 17:30 too,
    # which is closing time: Fiona hears of it on Monday at 09:00, not over the weekend.
    frozen_clock.set(datetime(2026, 12, 4, 16, 30, tzinfo=UTC))
    _, slot_id = await start_escalating(services, "R-2")
    await slot_service.claim(services, fiona, slot_id, None)
    frozen_clock.set(datetime(2026, 12, 4, 17, 30, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) == 1
    async with services.db.connection() as conn:
        note = await conn.fetchrow("SELECT recipient, deliver_at, details FROM notification")
    assert note["recipient"] == "fiona"
    assert note["deliver_at"] == datetime(2026, 12, 7, 9, tzinfo=UTC)
    assert note["details"]["deferred"] is True


async def test_a_firing_that_fails_is_postponed_and_the_rest_of_its_batch_fires(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = sla_services
    run, _ = await start_escalating(services, "R-3")
    async with services.db.connection() as conn:
        # A timeout the state does not declare: firing it raises.
        await conn.execute(
            "INSERT INTO timer (key, run, kind, part, due_at, status, fired, updated_at) "
            "VALUES ($1, $2, 'timeout', '9', $3, 'armed', 0, $3)",
            f"{run.id}:{run.visit}:timeout:9",
            uuid.UUID(run.id),
            frozen_clock.now(),
        )
    frozen_clock.set(datetime(2026, 12, 1, 10, tzinfo=UTC))  # the 50 % reminder is due
    assert await timers.run_due(services, frozen_clock.now()) == 1
    async with services.db.connection() as conn:
        rows = {
            r["part"]: (r["status"], r["due_at"])
            for r in await conn.fetch("SELECT part, status, due_at FROM timer")
        }
    status, due = rows["9"]
    assert status == "armed"  # tried again after the first backoff (base 30 s, jitter)
    assert timedelta(seconds=15) <= due - frozen_clock.now() <= timedelta(seconds=30)
    assert rows["0"][0] == "fired"


async def test_an_outsiders_quiet_hours_follow_the_workflows_calendar(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """Outsiders have no calendar: a reminder at 02:00 waits for uk-london's 09:00 opening."""
    services = sla_services
    app = await principal_service.get(services, "app")
    assert app is not None
    app = dataclasses.replace(app, powers=(Grant(INTEGRATION, workflows=("outsider-at-night",)),))
    frozen_clock.set(datetime(2026, 12, 1, 16, tzinfo=UTC))
    await run_service.start_run(
        services,
        app,
        workflow="outsider-at-night",
        subject_type="contract",
        external_id="C-1",
        attributes={"email": "signer@client.example", "name": "Sid Signer"},
        idempotency_key=None,
    )
    frozen_clock.set(datetime(2026, 12, 2, 2, tzinfo=UTC))  # 10 real hours later
    assert await timers.run_due(services, frozen_clock.now()) == 1
    async with services.db.connection() as conn:
        notes = await conn.fetch(
            "SELECT recipient, recipient_email, recipient_name, link_requested, deliver_at "
            "FROM notification ORDER BY id"
        )
    assert [tuple(n) for n in notes] == [
        # Lee (legal) works on us-new-york hours: 09:00 there is 14:00 UTC.
        ("lee", "lee@example.com", "Lee Legal", False, datetime(2026, 12, 2, 14, tzinfo=UTC)),
        (
            "email:signer@client.example",
            "signer@client.example",
            "Sid Signer",
            True,
            datetime(2026, 12, 2, 9, tzinfo=UTC),
        ),
    ]
