"""A slot's held facts (picked_at, held_us, held_since) say what its timeline says, after
every kind of move: claim, release, claim-next, assign, an escalation's reassignment,
completion and cancellation (core/slots/holding.py; the SLA report reads them)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from taskflow import clock
from taskflow.core.reports import slot_measures
from taskflow.core.slots import filters, holding
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.reports import reports as report_service
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from tests.integration.starting import start_escalating

pytestmark = pytest.mark.anyio

US = timedelta(microseconds=1)


async def _facts(services: container.Services, slot_id: str) -> dict[str, object]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT picked_at, held_us, held_since FROM slot WHERE id = $1", uuid.UUID(slot_id)
        )
    assert row is not None
    return dict(row)


async def _timeline_says(
    services: container.Services, slot_id: str, now: datetime
) -> tuple[dict[str, object], int]:
    """The held facts as read from the timeline (independently of holding.moved), and the
    held µs at ``now`` by the ranges the report sums (core/reports/slot_measures.held)."""
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT kind, at, details FROM audit_event WHERE slot = $1 ORDER BY at, id",
            uuid.UUID(slot_id),
        )
    moves = [
        slot_measures.Move(r["kind"], r["at"], r["details"].get("held"))
        for r in rows
        if r["kind"] in holding.MOVE_KINDS
        or (r["kind"] == holding.REASSIGNED and "held" in r["details"])
    ]
    ranges = slot_measures.held(moves, now)
    held = [m for m in moves if m.holds]
    is_open = bool(moves) and moves[-1].holds
    closed = ranges[:-1] if is_open and ranges else ranges
    facts = {
        "picked_at": held[0].at if held else None,
        "held_us": sum((b - a) // US for a, b in closed),
        "held_since": moves[-1].at if is_open else None,
    }
    return facts, sum((b - a) // US for a, b in ranges)


_SLA = ("milestone", "calendar", "budget_us", "working_days", "pauses", "met_at", "due_at",
        "breached_at")  # fmt: skip


async def _report_clock_agrees(services: container.Services, slot_id: str) -> None:
    """The slot's copy of its report clock (finished, else assigned) equals the clock row."""
    async with services.db.connection() as conn:
        copy = await conn.fetchrow(
            f"SELECT {', '.join(f'sla_{c}' for c in _SLA)} FROM slot WHERE id = $1",
            uuid.UUID(slot_id),
        )
        row = await conn.fetchrow(
            f"SELECT {', '.join(_SLA)} FROM sla_clock WHERE slot = $1 "
            "ORDER BY milestone = 'finished' DESC LIMIT 1",
            uuid.UUID(slot_id),
        )
    assert copy is not None
    assert row is not None
    assert tuple(copy) == tuple(row)


async def _agree(services: container.Services, slot_id: str, now: datetime) -> dict[str, object]:
    await _report_clock_agrees(services, slot_id)
    stored = await _facts(services, slot_id)
    expected, held_now = await _timeline_says(services, slot_id, now)
    assert stored == expected
    open_part = (now - stored["held_since"]) // US if stored["held_since"] else 0  # type: ignore[operator]
    assert stored["held_us"] + open_part == held_now  # type: ignore[operator]
    return stored


TEN_MINUTES = 10 * 60 * 1_000_000


async def _pickup(services: container.Services, slot_id: str) -> tuple[object, ...]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT pickup_clock, pickup_biz_us, pickup_real_us FROM slot WHERE id = $1",
            uuid.UUID(slot_id),
        )
    assert row is not None
    return tuple(row)


async def _start(services: container.Services, external_id: str) -> str:
    return (await start_escalating(services, external_id))[1]


async def _who(services: container.Services, login: str):  # type: ignore[no-untyped-def]
    found = await principal_service.get(services, login)
    assert found is not None
    return found


async def test_claims_releases_assignments_escalation_and_completion_keep_held_facts(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = sla_services
    fiona, frank, ada, leah = [await _who(services, p) for p in ("fiona", "frank", "ada", "leah")]
    t = datetime(2026, 12, 1, 15, tzinfo=UTC)
    frozen_clock.set(t)
    slot_id = await _start(services, "R-1")
    assert await _agree(services, slot_id, t) == {
        "picked_at": None,
        "held_us": 0,
        "held_since": None,
    }

    frozen_clock.set(t + timedelta(minutes=10))
    await slot_service.claim(services, fiona, slot_id, None)
    facts = await _agree(services, slot_id, t + timedelta(minutes=20))
    assert facts["picked_at"] == t + timedelta(minutes=10)
    # Time to pickup is final now: kept on the slot for the report, on its finished clock.
    assert await _pickup(services, slot_id) == ("finished", TEN_MINUTES, TEN_MINUTES)

    frozen_clock.set(t + timedelta(minutes=30))
    await slot_service.release(services, fiona, slot_id, "not mine")
    facts = await _agree(services, slot_id, t + timedelta(minutes=40))
    assert facts["held_us"] == 20 * 60 * 1_000_000
    assert facts["held_since"] is None

    frozen_clock.set(t + timedelta(minutes=45))  # the claim-next statement
    await slot_service.claim_next(services, frank, filters.SlotFilter())
    await _agree(services, slot_id, t + timedelta(minutes=50))

    assert await _pickup(services, slot_id) == ("finished", TEN_MINUTES, TEN_MINUTES)

    frozen_clock.set(t + timedelta(minutes=55))  # a delegate hands it over
    await slot_service.assign(services, ada, slot_id, "fiona", None, "cover")
    facts = await _agree(services, slot_id, t + timedelta(minutes=56))
    assert facts["picked_at"] == t + timedelta(minutes=10)
    assert facts["held_since"] == t + timedelta(minutes=55)

    # The breach (two business hours from 15:00: 17:00, fired on Wednesday) reassigns to
    # Leah: a move that holds, so Fiona's hold ends there and Leah's starts; held time runs on.
    breach = datetime(2026, 12, 2, 10, tzinfo=UTC)
    frozen_clock.set(breach)
    assert await timers.run_due(services, breach) >= 1
    async with services.db.connection() as conn:
        assert (
            await conn.fetchval("SELECT holder FROM slot WHERE id = $1", uuid.UUID(slot_id))
            == "leah"
        )
    facts = await _agree(services, slot_id, breach + timedelta(minutes=5))
    assert facts["held_since"] == breach
    # Fiona 10-30 min, then held without a break from Frank's claim at 45 min to the breach.
    assert facts["held_us"] == 20 * 60 * 1_000_000 + (breach - t - timedelta(minutes=45)) // US
    async with services.db.connection() as conn:
        # The worker recorded the breach; the slot's copy of the clock has it too.
        assert await conn.fetchval(
            "SELECT sla_breached_at FROM slot WHERE id = $1", uuid.UUID(slot_id)
        ) == datetime(2026, 12, 1, 17, tzinfo=UTC)

    frozen_clock.set(breach + timedelta(minutes=30))
    await slot_service.complete(
        services, leah, slot_id, event=None, payload={}, expected_version=None
    )
    facts = await _agree(services, slot_id, breach + timedelta(hours=1))
    assert facts["held_since"] is None


async def test_an_escalation_that_reopens_and_a_cancellation_keep_held_facts(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = sla_services
    fiona, ada = [await _who(services, p) for p in ("fiona", "ada")]
    t = datetime(2026, 12, 1, 15, tzinfo=UTC)
    frozen_clock.set(t)
    first = await _start(services, "R-2")
    second = await _start(services, "R-3")
    await slot_service.claim(services, fiona, first, None)
    frozen_clock.set(t + timedelta(minutes=5))
    await slot_service.claim(services, fiona, second, None)

    frozen_clock.set(t + timedelta(hours=1))
    async with services.db.connection() as conn:
        run_id = str(await conn.fetchval("SELECT run FROM slot WHERE id = $1", uuid.UUID(first)))
    await run_service.cancel_run(services, ada, run_id=run_id, reason="withdrawn")
    facts = await _agree(services, first, t + timedelta(hours=2))
    assert facts["held_us"] == 60 * 60 * 1_000_000
    assert facts["held_since"] is None

    # A hold the timeline left open (as an escalation that reopens a slot leaves it) is
    # closed by the next claim, through the claim-next statement too.
    frozen_clock.set(t + timedelta(hours=2))
    await slot_service.release(services, fiona, second, None)
    await _agree(services, second, t + timedelta(hours=2))
    async with services.db.connection() as conn:
        await conn.execute(
            "UPDATE slot SET held_since = $2 WHERE id = $1",
            uuid.UUID(second),
            t + timedelta(hours=1, minutes=30),
        )
    frozen_clock.set(t + timedelta(hours=3))
    await slot_service.claim_next(services, fiona, filters.SlotFilter())
    facts = await _facts(services, second)
    assert facts["held_us"] == (115 + 90) * 60 * 1_000_000
    assert facts["held_since"] == t + timedelta(hours=3)


async def test_a_reassignment_moves_the_slot_held_by_a_person_or_back_in_a_pool(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = sla_services
    fiona = await _who(services, "fiona")
    t = datetime(2026, 12, 1, 15, tzinfo=UTC)
    breach = datetime(2026, 12, 1, 17, tzinfo=UTC)  # two business hours later
    frozen_clock.set(t)
    # Claimed by Fiona, then taken from her for the leads' pool: her hold ends at the breach.
    run, pooled = await start_escalating(services, "R-4", "escalating-to-pool")
    # Nobody took this one: the breach hands it to Leah, which is its pickup.
    _, handed = await start_escalating(services, "R-5")
    frozen_clock.set(t + timedelta(minutes=10))
    await slot_service.claim(services, fiona, pooled, None)

    frozen_clock.set(breach)
    assert await timers.run_due(services, breach) >= 2
    later = breach + timedelta(hours=1)
    frozen_clock.set(later)
    facts = await _agree(services, pooled, later)
    assert (facts["picked_at"], facts["held_since"]) == (t + timedelta(minutes=10), None)
    assert facts["held_us"] == 110 * 60 * 1_000_000
    facts = await _agree(services, handed, later)
    assert (facts["picked_at"], facts["held_since"], facts["held_us"]) == (breach, breach, 0)
    # The run's lead time reads the same timeline in SQL: worked 15:10-17:00 only.
    lead = await report_service.run_lead_time(services, run.id)
    assert (lead.total_us, lead.worked_us) == (3 * 3600 * 1_000_000, 110 * 60 * 1_000_000)


class TickingClock(clock.FrozenClock):
    """Moves a millisecond every time it is read, as a real clock moves within a use case."""

    def now(self) -> datetime:
        return self.advance(timedelta(milliseconds=1))


async def test_the_timeline_and_the_held_facts_agree_when_the_clock_moves_within_a_move(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    services = dataclasses.replace(sla_services, clock=TickingClock(frozen_clock.now()))
    fiona, frank, ada = [await _who(services, p) for p in ("fiona", "frank", "ada")]
    _, slot_id = await start_escalating(services, "R-6")
    await slot_service.claim(services, fiona, slot_id, None)
    await slot_service.release(services, fiona, slot_id, None)
    await slot_service.claim(services, frank, slot_id, None)
    await slot_service.assign(services, ada, slot_id, "fiona", None, "cover")
    facts = await _agree(services, slot_id, services.clock.now())
    assert facts["held_since"] is not None
    assert facts["held_us"] > 0
