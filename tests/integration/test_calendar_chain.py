"""The calendar chain against PostgreSQL: every path that changes a slot's holder moves its
running clock onto the calendar the chain answers for the new holder (docs/calendars.md,
"The calendar chain"), the time already spent kept (``keep-elapsed``).

Fiona and Leah work on uk-london, Frank is given de-berlin, nobody holding: the workflow's
us-new-york. The FrozenClock is moved, never slept on.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from taskflow import clock, errors
from taskflow.core.slots import filters
from taskflow.service.access import access, working_hours
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.operate import operate
from taskflow.service.slots import slots as slot_service
from taskflow.store.slots import claims
from tests import conftest
from tests.conftest import app_with, gql
from tests.integration.starting import app_starts, finished_clock, person, recomputed_line

pytestmark = pytest.mark.anyio

chain_services, api, tokens = app_with(
    "chain_services", Path(__file__).parent / "chain_workflows.py"
)
CLOCKS = """{ inbox(first: 10) { edges { node { name holder
  clocks { milestone calendar calendarLink dueAt } } } } }"""

TUESDAY_14 = datetime(2026, 12, 1, 14, tzinfo=UTC)  # New York 09:00, London 14:00


async def holder(services: container.Services, slot_id: str) -> str | None:
    async with services.db.connection() as conn:
        value = await conn.fetchval("SELECT holder FROM slot WHERE id = $1", uuid.UUID(slot_id))
    return str(value) if value is not None else None


@pytest.fixture
async def opened(
    chain_services: container.Services, frozen_clock: clock.FrozenClock
) -> tuple[container.Services, str]:
    """A chained run opened Tuesday 14:00 UTC; Frank works on de-berlin."""
    services = chain_services
    frozen_clock.set(TUESDAY_14)
    frank = await person(services, "frank")
    await working_hours.set_working_hours(
        services, frank, "frank", time_zone="Europe/Berlin", windows=None, calendar="de-berlin"
    )
    run = await app_starts(services, "chained", "C-1", {}, grant=True)
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id))
    return services, str(slot_id)


Path_ = Callable[[container.Services, str], Awaitable[None]]


async def _claim(services: container.Services, slot_id: str) -> None:
    await slot_service.claim(services, await person(services, "fiona"), slot_id, None)


async def _claim_next(services: container.Services, slot_id: str) -> None:
    fiona = await person(services, "fiona")
    await slot_service.claim_next(services, fiona, filters.SlotFilter(workflow="chained"))


async def _assign(services: container.Services, slot_id: str) -> None:
    fiona = await person(services, "fiona")
    await slot_service.claim(services, fiona, slot_id, None)
    await slot_service.assign(services, fiona, slot_id, "frank", None, "cover")


async def _delegate(services: container.Services, slot_id: str) -> None:
    # Leah is a delegate (a lead): she hands the open slot to Frank without holding it.
    await slot_service.assign(
        services, await person(services, "leah"), slot_id, "frank", None, None
    )


async def _release(services: container.Services, slot_id: str) -> None:
    frank = await person(services, "frank")
    await slot_service.claim(services, frank, slot_id, None)
    await slot_service.release(services, frank, slot_id, "back")


async def _reassign_held(services: container.Services, slot_id: str) -> None:
    await slot_service.claim(services, await person(services, "fiona"), slot_id, None)
    await operate.reassign_held(
        services,
        await person(services, "ada"),
        principal_id="fiona",
        to="frank",
        reason="fiona is off",
        dry_run=False,
    )


async def _escalation(services: container.Services, slot_id: str) -> None:
    # The 90 % reminder reassigns to Frank: 3.6 h of New York time after 14:00 is 17:36.
    await slot_service.claim(services, await person(services, "fiona"), slot_id, None)
    await slot_service.release(services, await person(services, "fiona"), slot_id, None)
    frozen: clock.FrozenClock = services.clock  # type: ignore[assignment]
    frozen.set(datetime(2026, 12, 1, 17, 36, tzinfo=UTC))
    assert await timers.run_due(services, services.clock.now()) >= 1


#: Every path that changes who holds a slot outside the engine, and whose calendar its
#: finished clock must run on afterwards. Completion (also by link) meets the clock: nothing
#: is left to move, and the engine's own steps keep a clock's calendar
#: (tests/unit/test_calendar_chain.py, the holder a decision does not know).
PATHS: dict[str, tuple[Path_, str, str | None]] = {
    "claim": (_claim, "uk-london", "fiona"),
    "claim next": (_claim_next, "uk-london", "fiona"),
    "assign": (_assign, "de-berlin", "frank"),
    "delegate": (_delegate, "de-berlin", "frank"),
    "release": (_release, "us-new-york", None),
    "reassignHeld": (_reassign_held, "de-berlin", "frank"),
    "escalation reassign": (_escalation, "de-berlin", "frank"),
}


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_every_holder_change_moves_the_clock_onto_the_chains_answer(
    opened: tuple[container.Services, str], path: str
) -> None:
    services, slot_id = opened
    assert (await finished_clock(services, slot_id))[0] == "us-new-york"
    move, calendar, expected_holder = PATHS[path]
    await move(services, slot_id)
    assert await holder(services, slot_id) == expected_holder
    assert (await finished_clock(services, slot_id))[0] == calendar


async def test_a_running_clock_keeps_the_time_spent_and_counts_the_rest_on_the_new_calendar(
    opened: tuple[container.Services, str], frozen_clock: clock.FrozenClock
) -> None:
    services, slot_id = opened
    # On New York time from 14:00 UTC, four hours run to 18:00 UTC.
    assert await finished_clock(services, slot_id) == (
        "us-new-york",
        datetime(2026, 12, 1, 18, tzinfo=UTC),
    )
    # An hour spent; Fiona (London, 09:00-17:30) claims at 15:00: three hours are left, on
    # London time: 2.5 h today, the last half hour Wednesday 09:00-09:30.
    frozen_clock.set(datetime(2026, 12, 1, 15, tzinfo=UTC))
    await _claim(services, slot_id)
    assert await finished_clock(services, slot_id) == (
        "uk-london",
        datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
    )
    line = await recomputed_line(services, slot_id)
    assert line["details"]["old_calendar"] == "us-new-york"
    assert line["details"]["new_calendar"] == "uk-london"
    assert "uk-london" in line["reason"]


async def test_graphql_names_the_calendar_and_the_link_that_measured_the_clock(
    opened: tuple[container.Services, str], api: Any, tokens: dict[str, str]
) -> None:
    services, slot_id = opened

    async def clocks(who: str) -> list[dict[str, Any]]:
        edges = (await gql(api, CLOCKS, {}, token=tokens[who])).ok()["inbox"]["edges"]
        [slot] = [e["node"] for e in edges if e["node"]["name"] == "approve"]
        return list(slot["clocks"])

    [pooled] = await clocks("fiona")
    assert (pooled["calendar"], pooled["calendarLink"]) == ("us-new-york", "workflow")
    await _claim(services, slot_id)
    [held] = await clocks("fiona")
    assert (held["calendar"], held["calendarLink"]) == ("uk-london", "holder")


async def test_the_plain_claim_statement_leaves_a_chained_slot_to_the_general_path(
    opened: tuple[container.Services, str],
) -> None:
    """The one-statement claim knows no principals' calendars: it chooses the chained slot
    and writes nothing (the general path claims it with its clock, one transaction)."""
    services, slot_id = opened
    facts = services.catalog.claim_facts
    assert "chained 1 waiting approve" in facts.chained
    fiona = await person(services, "fiona")
    async with services.db.connection() as conn:
        plain = await claims.claim_next_plain(
            conn,
            principal_id=fiona.id,
            keys=sorted(access.keys(fiona)),
            f=filters.SlotFilter(workflow="chained"),
            now=services.clock.now(),
            facts=facts,
        )
    assert plain is not None
    assert (plain.candidate, plain.slot) == (slot_id, None)
    assert await holder(services, slot_id) is None


#: The finished clock's calendar for each holder (the chain's answer; nobody: the workflow's).
CALENDAR_OF = {None: "us-new-york", "fiona": "uk-london", "frank": "de-berlin"}


async def held_clocks(services: container.Services, run_ids: list[str]) -> set[tuple[Any, str]]:
    """Each chained slot's holder and its finished clock's calendar, in one snapshot."""
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT s.holder, k.calendar FROM slot s"
            " JOIN sla_clock k ON k.slot = s.id AND k.milestone = 'finished'"
            " WHERE s.run = ANY($1::uuid[])",
            run_ids,
        )
    return {(r["holder"], r["calendar"]) for r in rows}


async def test_claim_next_moves_the_clock_with_the_claim_whatever_races_it(
    chain_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """claimNext of a slot whose chain asks the holder moves its clock in the claim's own
    transaction: raced by a delegate handing the slots to Frank, then by Frank's releases, a
    reader never sees a holder whose clock runs on another's calendar, nor does the end."""
    database = await conftest.reconnect(chain_services.db, min_size=4, max_size=20)
    services = replace(chain_services, db=database)
    try:
        frozen_clock.set(TUESDAY_14)
        frank, fiona, leah = [await person(services, p) for p in ("frank", "fiona", "leah")]
        await working_hours.set_working_hours(
            services, frank, "frank", time_zone="Europe/Berlin", windows=None, calendar="de-berlin"
        )
        run_ids = [
            (await app_starts(services, "chained", f"R-{i}", {}, grant=True)).id for i in range(8)
        ]
        async with services.db.connection() as conn:
            found = await conn.fetch("SELECT id FROM slot WHERE run = ANY($1::uuid[])", run_ids)
        slot_ids = [str(r["id"]) for r in found]
        seen: set[tuple[Any, str]] = set()
        done = asyncio.Event()

        async def read() -> None:
            while not done.is_set():
                seen.update(await held_clocks(services, run_ids))

        async def quietly(move: Awaitable[Any]) -> None:
            with contextlib.suppress(errors.TaskflowError):
                await move

        def claims_next() -> list[Awaitable[None]]:
            chained = filters.SlotFilter(workflow="chained")
            return [quietly(slot_service.claim_next(services, fiona, chained)) for _ in slot_ids]

        reader = asyncio.create_task(read())
        await asyncio.gather(
            *claims_next(),
            *(
                quietly(slot_service.assign(services, leah, s, "frank", None, None))
                for s in slot_ids
            ),
        )
        await asyncio.gather(
            *(quietly(slot_service.release(services, frank, s, "back")) for s in slot_ids),
            *claims_next(),
        )
        done.set()
        await reader
        seen.update(await held_clocks(services, run_ids))
        assert "fiona" in {holder for holder, _ in seen}
        assert {(h, c) for h, c in seen if CALENDAR_OF[h] != c} == set()
    finally:
        await database.close()
