"""A holder's leave stands their clocks still when the milestone says so
(``holder_leave="pause"``; docs/sla.md, "A holder's leave"): adding leave pauses the clocks
of the slots they hold through it, removing it or handing the slot on takes the pause
ahead away, and the clock runs again by itself when the leave ends. Against PostgreSQL; the
FrozenClock is moved, never slept on."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskflow import clock
from taskflow.core.slots import filters
from taskflow.service.access import working_hours
from taskflow.service.clocks import deadlines
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from tests.conftest import services_fixture
from tests.integration.starting import app_starts, person

pytestmark = pytest.mark.anyio

leave_services = services_fixture(
    "leave_services",
    Path(__file__).parent / "chain_workflows.py",
    doc="The examples plus the chained workflows.",
)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 12, 1, hour, minute, tzinfo=UTC)


async def reading(services: container.Services, slot_id: str) -> tuple[str, datetime | None]:
    [finished] = (await deadlines.readings(services, [slot_id]))[slot_id]
    return finished.status, finished.due_at


@pytest.fixture
async def held(
    leave_services: container.Services, frozen_clock: clock.FrozenClock
) -> tuple[container.Services, str]:
    """Fiona holds a four-hour slot from 14:00: due 18:00."""
    services = leave_services
    frozen_clock.set(at(14))
    run = await app_starts(services, "leave-paused", "P-1", {}, grant=True)
    async with services.db.connection() as conn:
        slot_id = str(await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id)))
    await slot_service.claim(services, await person(services, "fiona"), slot_id, None)
    assert await reading(services, slot_id) == ("running", at(18))
    return services, slot_id


async def test_leave_stands_the_clock_still_and_it_runs_again_when_the_leave_ends(
    held: tuple[container.Services, str], frozen_clock: clock.FrozenClock
) -> None:
    services, slot_id = held
    fiona = await person(services, "fiona")
    frozen_clock.set(at(14, 30))
    await working_hours.add_leave(services, fiona, "fiona", at(15), at(16), "dentist")
    assert await reading(services, slot_id) == ("running", at(19))
    frozen_clock.set(at(15, 30))
    assert await reading(services, slot_id) == ("paused", at(19))
    frozen_clock.set(at(16, 30))  # the leave is over: nobody resumed it
    assert await reading(services, slot_id) == ("running", at(19))
    [finished] = (await deadlines.readings(services, [slot_id]))[slot_id]
    assert finished.elapsed == timedelta(hours=1, minutes=30)


async def test_removing_the_leave_or_handing_the_slot_on_takes_the_pause_ahead_away(
    held: tuple[container.Services, str], frozen_clock: clock.FrozenClock
) -> None:
    services, slot_id = held
    fiona = await person(services, "fiona")
    frozen_clock.set(at(14, 30))
    await working_hours.add_leave(services, fiona, "fiona", at(15), at(16), None)
    # Back early: half an hour stood still, the rest of the leave is gone.
    frozen_clock.set(at(15, 30))
    await working_hours.remove_leave(services, fiona, "fiona", at(15), at(16))
    assert await reading(services, slot_id) == ("running", at(18, 30))
    await working_hours.add_leave(services, fiona, "fiona", at(17), at(18), None)
    assert await reading(services, slot_id) == ("running", at(19, 30))
    # Released before that leave: the pool's clock does not stop for Fiona's leave.
    frozen_clock.set(at(15, 45))
    await slot_service.release(services, fiona, slot_id, "over to the team")
    assert await reading(services, slot_id) == ("running", at(18, 30))
    # Frank, with no leave, claims it: nothing stands still.
    await slot_service.claim(services, await person(services, "frank"), slot_id, None)
    assert await reading(services, slot_id) == ("running", at(18, 30))


@pytest.mark.parametrize("next_one", [False, True], ids=["claim", "claim next"])
async def test_claiming_with_leave_ahead_pauses_through_it(
    leave_services: container.Services, frozen_clock: clock.FrozenClock, next_one: bool
) -> None:
    services = leave_services
    frozen_clock.set(at(14))
    frank = await person(services, "frank")
    await working_hours.add_leave(services, frank, "frank", at(16), at(17), None)
    run = await app_starts(services, "leave-paused", "P-2", {}, grant=True)
    async with services.db.connection() as conn:
        slot_id = str(await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id)))
    assert await reading(services, slot_id) == ("running", at(18))  # nobody holds it yet
    frozen_clock.set(at(15))
    frank = await person(services, "frank")
    if next_one:
        await slot_service.claim_next(services, frank, filters.SlotFilter(workflow="leave-paused"))
    else:
        await slot_service.claim(services, frank, slot_id, None)
    assert await reading(services, slot_id) == ("running", at(19))
