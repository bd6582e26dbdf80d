"""Claims race real connections: exactly one winner per slot, every slot taken exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from taskflow import errors
from taskflow.core.access import principals as core_principals
from taskflow.core.runs import refusals
from taskflow.core.slots import filters
from taskflow.service.access import principals
from taskflow.service.common import container
from taskflow.service.runs import runs
from taskflow.service.slots import slots
from tests import conftest

pytestmark = pytest.mark.anyio


@pytest.fixture
async def racing(services: container.Services) -> AsyncIterator[container.Services]:
    """The services on a pool wide enough for 50 concurrent claimers, each on its own connection."""
    database = await conftest.reconnect(services.db, min_size=10, max_size=60)
    try:
        yield replace(services, db=database)
    finally:
        await database.close()


async def procurement_staff(
    services: container.Services, count: int
) -> list[core_principals.Principal]:
    records = [
        {"id": f"buyer{i:03d}", "display_name": f"Buyer {i}", "roles": ["procurement"]}
        for i in range(count)
    ]
    await principals.load(services, records)
    return [core_principals.build(r) for r in records]


async def open_uploads(services: container.Services, documents: int) -> list[str]:
    """One vendor run whose foreach opens one upload slot per document."""
    app = core_principals.build(
        {"id": "app", "display_name": "App", "powers": [{"power": "integration"}]}
    )
    started = await runs.start_run(
        services,
        app,
        workflow="vendor-onboarding",
        subject_type="vendor",
        external_id="V-RACE",
        attributes={
            "vendor_number": "V-RACE",
            "legal_name": "Race Ltd",
            "vat_number": "GB123456789",
            "contact_email": "v@race.example",
            "handles_personal_data": False,
            "required_documents": [f"doc {i}" for i in range(documents)],
        },
        idempotency_key=None,
    )
    async with services.db.connection() as conn:
        ids = await conn.fetch(
            "SELECT id::text FROM slot "
            "WHERE run = $1::uuid AND name = 'upload' AND status = 'open'",
            started.run.view.id,
        )
    return [r["id"] for r in ids]


async def test_fifty_claimers_per_slot_give_one_winner_each(racing: container.Services) -> None:
    staff = await procurement_staff(racing, 50)
    slot_ids = await open_uploads(racing, 200)
    assert len(slot_ids) == 200

    async def attempt(slot_id: str, who: core_principals.Principal) -> tuple[str, str, str | None]:
        try:
            won = await slots.claim(racing, who, slot_id, None)
        except refusals.AlreadyClaimed as refusal:
            return slot_id, "refused", refusal.facts["holder"]
        return slot_id, "won", won.holder

    results = await asyncio.gather(*(attempt(s, who) for s in slot_ids for who in staff))
    winners = {s: holder for s, outcome, holder in results if outcome == "won"}
    assert Counter(s for s, outcome, _ in results if outcome == "won") == Counter(slot_ids)
    # Every loser was told, by a typed refusal, who won.
    losers = [(s, holder) for s, outcome, holder in results if outcome == "refused"]
    assert len(losers) == 200 * 49
    assert all(holder == winners[s] for s, holder in losers)
    async with racing.db.connection() as conn:
        claimed = await conn.fetch("SELECT id::text, holder FROM slot WHERE status = 'claimed'")
        audits = await conn.fetchval("SELECT count(*) FROM audit_event WHERE kind = 'slot.claimed'")
        refused = await conn.fetchval("SELECT count(*) FROM audit_event WHERE kind = 'refused'")
    assert {r["id"]: r["holder"] for r in claimed} == winners
    assert audits == 200
    assert refused == 200 * 49


async def test_twenty_claimers_drain_two_thousand_slots_exactly_once(
    racing: container.Services,
) -> None:
    staff = await procurement_staff(racing, 20)
    slot_ids = await open_uploads(racing, 2000)
    assert len(slot_ids) == 2000

    async def drain(who: core_principals.Principal) -> list[str]:
        taken = []
        while True:
            try:
                slot = await slots.claim_next(
                    racing, who, filters.SlotFilter(workflow="vendor-onboarding")
                )
            except refusals.NothingToClaim:
                return taken
            assert slot.holder == who.id
            taken.append(slot.id)

    taken = await asyncio.gather(*(drain(who) for who in staff))
    every = [slot_id for mine in taken for slot_id in mine]
    assert sorted(every) == sorted(slot_ids)  # each exactly once
    assert sum(1 for mine in taken if mine) > 1  # the work was actually shared
    with pytest.raises(refusals.NothingToClaim, match="no open slot you may take"):
        await slots.claim_next(racing, staff[0], filters.SlotFilter())


async def test_a_stale_version_is_refused(racing: container.Services) -> None:
    staff = await procurement_staff(racing, 2)
    (slot_id,) = await open_uploads(racing, 1)
    with pytest.raises(refusals.StaleVersion, match="version 5"):
        await slots.claim(racing, staff[0], slot_id, 5)
    await slots.claim(racing, staff[0], slot_id, 1)
    with pytest.raises(errors.TaskflowError, match="already claimed by 'buyer000'"):
        await slots.claim(racing, staff[1], slot_id, 2)
