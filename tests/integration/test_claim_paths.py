"""claim-next's one-statement path writes exactly what the general path writes.

For each situation, two runs are brought to the same point at the same instant;
one slot is claimed the general way (the ``claim`` use case: the unit of work's
one planner, ``core/common/unit_of_work.plan``, plans the clocks, timers and timeline and
its one writer writes them), its twin by the plain claim-next statement
(``store/slots/claims.py``: the same planning done in SQL, checked here against the planner
on every situation it takes). Slot, clock
ledgers, timer rows and timeline lines must come out the same. A slot the
statement cannot plan (a paused clock) is left to the general path.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest

from taskflow import clock
from taskflow.core.access import principals as core_principals
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.access import access
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs
from taskflow.service.slots import slots
from taskflow.store.slots import claims
from tests.api import workflows as w

pytestmark = pytest.mark.anyio

APP = core_principals.build(
    {"id": "app", "display_name": "App", "powers": [{"power": "integration"}]}
)


async def _who(services: container.Services, principal_id: str) -> core_principals.Principal:
    found = await principal_service.get(services, principal_id)
    assert found is not None
    return found


async def _start(
    services: container.Services, workflow: str, kind: str, external_id: str, attrs: Any
) -> str:
    started = await runs.start_run(
        services,
        APP,
        workflow=workflow,
        subject_type=kind,
        external_id=external_id,
        attributes={**attrs, "reference": external_id},
        idempotency_key=None,
    )
    return started.run.view.id


async def _slot(services: container.Services, run_id: str, name: str) -> str:
    async with services.db.connection() as conn:
        found = await conn.fetchval(
            "SELECT id FROM slot WHERE run = $1 AND name = $2 AND status IN ('open', 'claimed')",
            uuid.UUID(run_id),
            name,
        )
    assert found is not None, (run_id, name)
    return str(found)


async def _snapshot(services: container.Services, slot_id: str, after_line: int) -> Any:
    """Everything a claim writes about a slot, with the slot's and run's ids taken out."""
    key = uuid.UUID(slot_id)
    async with services.db.connection() as conn:
        slot = await conn.fetchrow("SELECT * FROM slot WHERE id = $1", key)
        ledgers = await conn.fetch(
            "SELECT milestone, budget_us, started_at, pauses, met_at, due_at, breached_at "
            "FROM sla_clock WHERE slot = $1 ORDER BY milestone",
            key,
        )
        timers = await conn.fetch(
            "SELECT key, kind, part, due_at, status, fired FROM timer WHERE slot = $1 ORDER BY key",
            key,
        )
        lines = await conn.fetch(
            "SELECT kind, actor, details, at FROM audit_event WHERE slot = $1 AND id > $2 "
            "ORDER BY id",
            key,
            after_line,
        )
    run_id = str(slot["run"])

    def plain(value: Any) -> Any:
        return str(value).replace(slot_id, "<slot>").replace(run_id, "<run>")

    return {
        # Every column but the ids and the label (it names the subject's reference).
        "slot": {k: v for k, v in dict(slot).items() if k not in ("id", "run", "label")},
        "clocks": [dict(r) for r in ledgers],
        "timers": [{**dict(r), "key": plain(r["key"])} for r in timers],
        "timeline": [
            {**dict(r), "details": json.loads(plain(json.dumps(r["details"])))} for r in lines
        ],
    }


async def _last_line(services: container.Services) -> int:
    async with services.db.connection() as conn:
        return int(await conn.fetchval("SELECT coalesce(max(id), 0) FROM audit_event"))


async def _claim_both_ways(
    services: container.Services, actor_id: str, general: str, twin: str, name: str
) -> tuple[Any, Any]:
    """Claim ``general`` by id, then ``twin`` with the plain statement, at the same instant."""
    actor = await _who(services, actor_id)
    line = await _last_line(services)
    await slots.claim(services, actor, general, None)
    async with services.db.connection() as conn:
        plain = await claims.claim_next_plain(
            conn,
            principal_id=actor.id,
            keys=sorted(access.keys(actor)),
            f=SlotFilter(name=name),
            now=services.clock.now(),
            facts=services.catalog.claim_facts,
        )
    assert plain is not None
    assert plain.slot is not None
    assert plain.slot.id == twin
    return await _snapshot(services, general, line), await _snapshot(services, twin, line)


#: A live slot's time to pickup, kept for reports by the general path; the statement has no
#: calendar to measure it, so the report measures such a slot on read (docs/reports.md).
PICKUP = ("pickup_clock", "pickup_biz_us", "pickup_real_us")


def _same(general: Any, plain: Any) -> None:
    # The claim-by-id line has no reason, claim-next's says "claim next": not compared.
    kept = {c: general["slot"].pop(c) for c in PICKUP}
    assert kept["pickup_real_us"] is not None
    # Kept from an earlier pickup, else left for the report to measure.
    assert {c: plain["slot"].pop(c) for c in PICKUP} in (kept, dict.fromkeys(PICKUP))
    assert plain == general


async def _expense_twins(services: container.Services) -> tuple[str, str]:
    a = await _start(services, "expense-approval", "expense", "EXP-A", w.EXPENSE)
    b = await _start(services, "expense-approval", "expense", "EXP-B", w.EXPENSE)
    return await _slot(services, a, "finance_review"), await _slot(services, b, "finance_review")


async def test_a_fresh_slot_meets_its_assigned_clock_and_cancels_its_timers(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    general, twin = await _expense_twins(services)
    frozen_clock.advance(timedelta(minutes=10))
    before, after = await _claim_both_ways(services, "fiona", general, twin, "finance_review")
    _same(before, after)
    assert [c["met_at"] for c in after["clocks"]] == [frozen_clock.now(), None]
    assert [t["key"] for t in after["timers"] if t["status"] == "cancelled"] == [
        "<slot>:at_risk:assigned",
        "<slot>:breach:assigned",
        "<slot>:reminder:1",
    ]
    assert [line["kind"] for line in after["timeline"]] == ["slot.claimed", "clock.met"]
    assert after["timeline"][1]["details"]["breached"] is None
    assert after["slot"]["due_at"] == after["clocks"][1]["due_at"]


async def test_a_late_pickup_is_met_breached_alike(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    general, twin = await _expense_twins(services)
    frozen_clock.advance(timedelta(hours=6, minutes=30))  # past the 4 business hours
    before, after = await _claim_both_ways(services, "fiona", general, twin, "finance_review")
    _same(before, after)
    met = after["timeline"][1]
    assert met["kind"] == "clock.met"
    assigned_due = after["clocks"][0]["due_at"]
    assert met["details"]["breached"] == assigned_due.isoformat()
    assert assigned_due < frozen_clock.now()


async def test_a_slot_claimed_again_after_a_release_changes_no_deadline(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    general, twin = await _expense_twins(services)
    fiona = await _who(services, "fiona")
    for slot_id in (general, twin):
        await slots.claim(services, fiona, slot_id, None)
        await slots.release(services, fiona, slot_id, "back to the pool")
    frozen_clock.advance(timedelta(minutes=30))
    before, after = await _claim_both_ways(services, "frank", general, twin, "finance_review")
    _same(before, after)
    assert [line["kind"] for line in after["timeline"]] == ["slot.claimed"]


async def _tickets_in_open_state(services: container.Services) -> tuple[str, str]:
    tess = await _who(services, "tess")
    found = []
    for ref in ("T-A", "T-B"):
        run_id = await _start(services, "support-ticket", "ticket", ref, w.TICKET)
        triage = await _slot(services, run_id, "triage")
        await slots.claim(services, tess, triage, None)
        await slots.complete(
            services,
            tess,
            triage,
            event=None,
            payload={"priority": "P2", "category": "bug"},
            expected_version=None,
        )
        found.append(run_id)
    return found[0], found[1]


@pytest.mark.parametrize("name", ["first_response", "resolution"])
async def test_ticket_slots_with_and_without_a_pickup_milestone(
    services: container.Services,
    people: dict[str, str],
    frozen_clock: clock.FrozenClock,
    name: str,
) -> None:
    a, b = await _tickets_in_open_state(services)
    frozen_clock.advance(timedelta(minutes=20))
    general, twin = await _slot(services, a, name), await _slot(services, b, name)
    before, after = await _claim_both_ways(services, "sasha", general, twin, name)
    _same(before, after)
    milestones = [c["milestone"] for c in after["clocks"]]
    assert milestones == (["assigned", "finished"] if name == "first_response" else ["finished"])


async def test_a_paused_pickup_clock_is_left_to_the_general_path(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    run_id, other = await _tickets_in_open_state(services)
    sasha = await _who(services, "sasha")
    for waiting in (run_id, other):
        await runs.move(
            services, sasha, run_id=waiting, name="ask_customer", data={"question": "Which one?"}
        )
    f = SlotFilter(name="first_response")
    async with services.db.connection() as conn:
        plain = await claims.claim_next_plain(
            conn,
            principal_id=sasha.id,
            keys=sorted(access.keys(sasha)),
            f=f,
            now=frozen_clock.now(),
            facts=services.catalog.claim_facts,
        )
    assert plain is not None
    assert plain.slot is None  # chosen, not claimed
    slot_id = plain.candidate
    claimed = await slots.claim_next(services, sasha, f)
    assert claimed.id == slot_id
    assert claimed.holder == "sasha"
    snapshot = await _snapshot(services, slot_id, 0)
    assigned = snapshot["clocks"][0]
    assert assigned["milestone"] == "assigned"
    assert assigned["met_at"] == frozen_clock.now()


async def test_claim_next_never_claims_a_slot_before_it_opened(
    services: container.Services, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    """claim-next reads the clock before it takes its slot; a slot opened (and its clocks
    started) by another transaction after that read is claimed, and its assigned clock met,
    at the slot's opening, never before it (found by the soak: met before started)."""
    run_id = await _start(services, "expense-approval", "expense", "E-late", w.EXPENSE)
    slot_id = await _slot(services, run_id, "finance_review")
    opened = frozen_clock.now()
    fiona = await _who(services, "fiona")
    for plain in (True, False):
        stale = opened - timedelta(milliseconds=2)  # read just before the slot opened
        async with services.db.connection() as conn:
            if plain:
                done = await claims.claim_next_plain(
                    conn,
                    principal_id=fiona.id,
                    keys=sorted(access.keys(fiona)),
                    f=SlotFilter(name="finance_review"),
                    now=stale,
                    facts=services.catalog.claim_facts,
                )
                assert done is not None
                assert done.slot is not None
                claimed_at = done.slot.claimed_at
            else:
                context = await claims.claim_next(
                    conn,
                    principal_id=fiona.id,
                    keys=sorted(access.keys(fiona)),
                    f=SlotFilter(name="finance_review"),
                    now=stale,
                )
                assert context is not None
                claimed_at = context.slot.claimed_at
        assert claimed_at == opened
        snapshot = await _snapshot(services, slot_id, 0)
        assert [line["at"] for line in snapshot["timeline"] if line["kind"] == "slot.claimed"][
            -1
        ] == opened
        met = next(c for c in snapshot["clocks"] if c["milestone"] == "assigned")
        if plain:
            assert met["met_at"] == opened >= met["started_at"]
        await slots.release(services, fiona, slot_id, None)
        frozen_clock.advance(timedelta(minutes=1))
        # The release changed the slot last: the next claim may not come before it.
        async with services.db.connection() as conn:
            opened = await conn.fetchval(
                "SELECT updated_at FROM slot WHERE id = $1", uuid.UUID(slot_id)
            )
