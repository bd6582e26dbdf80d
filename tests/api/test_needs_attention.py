"""Needs attention, produced by real use, and each reason cleared by its operator verb.

Every reason is made the way it happens (a route that matches nothing, a timer
whose firing keeps failing, a holder deactivated in SQL by an older version, a
breach nobody holds, a run left alone, an early event about to expire), read
over HTTP as an admin and as scoped leads, then cleared by the verb or the
natural action that mends it. Time moves only with the frozen clock.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.access import working_hours
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.operate import operate
from taskflow.service.slots import slots as slot_service
from tests.api import attention
from tests.api import workflows as w
from tests.api.attention import OPERATIONS, START, slot_of, start, timeline, token
from tests.conftest import gql

pytestmark = pytest.mark.anyio

services = attention.services

LIST = (OPERATIONS / "needs_attention.graphql").read_text()
GOTO = (OPERATIONS / "goto.graphql").read_text()
PAUSE = (OPERATIONS / "pause_clocks.graphql").read_text()
RESUME = (OPERATIONS / "resume_clocks.graphql").read_text()
REASSIGN = (OPERATIONS / "reassign_held.graphql").read_text()
RESCHEDULE = (OPERATIONS / "reschedule_timer.graphql").read_text()


async def items(
    client: httpx.AsyncClient, who: str, services: container.Services, **filter: Any
) -> list[dict[str, Any]]:
    found = await gql(
        client, LIST, {"filter": filter or None, "first": 100}, token=token(services, who)
    )
    data = found.ok()["needsAttention"]
    nodes = [e["node"] for e in data["edges"]]
    assert data["totalCount"] == len(nodes)
    return nodes


def gid(kind: str, local: str) -> str:
    return relay.to_global_id(kind, local)


async def test_needs_attention_is_scoped_and_refused_to_staff(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await attention.unmatched(services, "C-1")  # no size: no route will match
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    # A timer of another workflow fails: the admin sees both, triage's lead only hers.
    other = await start(services, "escalating-to-owner", "R-1", {"owner": "o" * 250})
    frozen_clock.set(START + timedelta(hours=2))
    assert await timers.run_due(services, frozen_clock.now()) == 2  # at risk, then the breach

    seen = await items(client, "ada", services)
    assert {(i["reason"], i["runId"]) for i in seen} == {
        ("ROUTE_UNMATCHED", gid("Run", run_id)),
        ("TIMER_FAILING", gid("Run", other)),
        ("BREACHED_UNHELD", gid("Run", other)),
    }
    (unmatched,) = [i for i in seen if i["reason"] == "ROUTE_UNMATCHED"]
    assert unmatched["since"] == START.isoformat()
    assert (unmatched["workflow"], unmatched["state"]) == ("triage", "intake")
    assert "goto" in unmatched["remedy"]
    assert [i["reason"] for i in await items(client, "leah", services)] == ["ROUTE_UNMATCHED"]
    assert await items(client, "olga", services) == []
    only = await items(client, "ada", services, reasons=["TIMER_FAILING"])
    assert [i["reason"] for i in only] == ["TIMER_FAILING"]
    assert await items(client, "ada", services, workflow="triage") == [unmatched]
    refused = await gql(client, LIST, token=token(services, "fiona"))
    assert refused.error_codes == ["FORBIDDEN"]

    # Paged by cursor, oldest first.
    page, rest = await w.two_pages(client, LIST, "needsAttention", token(services, "ada"), 1, 5)
    assert page["pageInfo"]["hasNextPage"]
    assert page["totalCount"] == 3
    assert len(rest["edges"]) == 2

    # goto clears it: refused to a candidate, to others, without a reason, for no state.
    def goto(state: str, reason: str = "size is 4, per the customer") -> dict[str, Any]:
        return {"input": {"runId": gid("Run", run_id), "state": state, "reason": reason}}

    no = (await gql(client, GOTO, goto("small"), token=token(services, "fiona"))).ok()["goto"]
    assert no["code"] == "FORBIDDEN"
    # Olga leads another workflow: she reads the run (its move is for leads), operates none.
    olga = (await gql(client, GOTO, goto("small"), token=token(services, "olga"))).ok()["goto"]
    assert olga["code"] == "FORBIDDEN"
    hidden = (await gql(client, GOTO, goto("small"), token=token(services, "paul"))).ok()["goto"]
    assert hidden["code"] == "NOT_FOUND"
    blank = (await gql(client, GOTO, goto("small", " "), token=token(services, "leah"))).ok()
    assert blank["goto"]["code"] == "INVALID_INPUT"
    nowhere = (await gql(client, GOTO, goto("nowhere"), token=token(services, "leah"))).ok()
    assert nowhere["goto"]["code"] == "MOVE_NOT_ALLOWED"
    moved = (await gql(client, GOTO, goto("small"), token=token(services, "leah"))).ok()["goto"]
    assert (moved["run"]["state"], moved["run"]["status"]) == ("small", "COMPLETED"), moved
    assert ("run.goto", "leah", "size is 4, per the customer") in await timeline(services, run_id)
    assert await items(client, "leah", services) == []
    ended = (await gql(client, GOTO, goto("big"), token=token(services, "leah"))).ok()["goto"]
    assert ended["code"] == "RUN_NOT_ACTIVE"

    # A breach nobody holds clears when someone takes the slot.
    await slot_service.claim(services, fiona, await slot_of(services, other, "approve"), None)
    assert [i["reason"] for i in await items(client, "ada", services)] == ["TIMER_FAILING"]


async def test_a_dead_timer_is_listed_and_cleared_by_reschedule(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await start(services, "escalating-to-owner", "R-2", {"owner": "o" * 250})
    frozen_clock.set(START + timedelta(hours=2))
    await timers.run_due(services, frozen_clock.now())
    for _ in range(12):  # every backoff runs out: the escalation is parked dead
        async with services.db.connection() as conn:
            due = await conn.fetchval(
                "SELECT due_at FROM timer WHERE run = $1 AND status = 'armed' AND attempts > 0",
                uuid.UUID(run_id),
            )
        if due is None:
            break
        frozen_clock.set(due)
        await timers.run_due(services, frozen_clock.now())
    dead = await items(client, "max", services, reasons=["TIMER_DEAD", "TIMER_FAILING"])
    assert [i["reason"] for i in dead] == ["TIMER_DEAD"]
    timer_id = dead[0]["timerId"]
    assert "StringDataRightTruncation" in dead[0]["detail"]

    later = frozen_clock.now() + timedelta(hours=3)
    ask = {"timerId": timer_id, "dueAt": later.isoformat(), "reason": "owner fixed tomorrow"}
    no = (await gql(client, RESCHEDULE, {"input": ask}, token=token(services, "fiona"))).ok()
    assert no["rescheduleTimer"]["code"] == "FORBIDDEN"
    leah = (await gql(client, RESCHEDULE, {"input": ask}, token=token(services, "leah"))).ok()
    assert leah["rescheduleTimer"]["code"] == "NOT_FOUND"  # not her workflow
    done = (await gql(client, RESCHEDULE, {"input": ask}, token=token(services, "max"))).ok()
    rescheduled = done["rescheduleTimer"]["timer"]
    assert (rescheduled["state"], rescheduled["dueAt"], rescheduled["attempts"]) == (
        "ARMED",
        later.isoformat(),
        0,
    )
    assert ("timer.rescheduled", "max", "owner fixed tomorrow") in await timeline(services, run_id)
    assert await items(client, "max", services, reasons=["TIMER_DEAD", "TIMER_FAILING"]) == []

    # A timer that is over cannot be rescheduled.
    async with services.db.connection() as conn:
        fired = await conn.fetchval(
            "SELECT id FROM timer WHERE run = $1 AND status = 'fired'", uuid.UUID(run_id)
        )
    spent = {**ask, "timerId": gid("Timer", str(fired))}
    over = (await gql(client, RESCHEDULE, {"input": spent}, token=token(services, "max"))).ok()
    assert over["rescheduleTimer"]["__typename"] == "TimerSpent"
    assert (over["rescheduleTimer"]["state"], over["rescheduleTimer"]["code"]) == (
        "FIRED",
        "TIMER_SPENT",
    )


async def test_work_held_by_a_deactivated_principal_is_reassigned_or_released(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    runs = [await start(services, "triage", f"C-{n}", {"size": n}) for n in (1, 2)]
    slots = [await slot_of(services, r, "check") for r in runs]
    for slot_id in slots:
        await slot_service.claim(services, fiona, slot_id, None)
    async with services.db.connection() as conn:  # as an older version, or by hand, would
        await conn.execute("UPDATE principal SET active = false WHERE id = 'fiona'")
    held = await items(client, "leah", services)
    assert {(i["reason"], i["slotId"], i["principalId"]) for i in held} == {
        ("HELD_BY_INACTIVE", gid("Slot", s), "fiona") for s in slots
    }

    def ask(to: str | None, dry: bool) -> dict[str, Any]:
        return {"input": {"principalId": "fiona", "to": to, "reason": "fiona left", "dryRun": dry}}

    no = (await gql(client, REASSIGN, ask("frank", False), token=token(services, "paul"))).ok()
    assert no["reassignHeld"]["code"] == "FORBIDDEN"
    # Sid is no candidate: nothing would move to him.
    sid = (await gql(client, REASSIGN, ask("sid", True), token=token(services, "leah"))).ok()
    assert sid["reassignHeld"] == {
        "__typename": "ReassignHeldSuccess",
        "held": 2,
        "moved": 0,
        "skipped": 2,
        "dryRun": True,
        "slotIds": [],
    }
    dry = (await gql(client, REASSIGN, ask("frank", True), token=token(services, "leah"))).ok()
    assert (dry["reassignHeld"]["held"], dry["reassignHeld"]["moved"]) == (2, 2)
    assert len(await items(client, "leah", services)) == 2  # a dry run changes nothing

    # Frank on leave now: refused, nothing moves (force: true would hand it over anyway).
    ada = await principal_service.get(services, "ada")
    assert ada is not None
    away = (START - timedelta(hours=1), START + timedelta(days=2))
    await working_hours.add_leave(services, ada, "frank", *away, None)
    gone = (await gql(client, REASSIGN, ask("frank", False), token=token(services, "leah"))).ok()
    assert gone["reassignHeld"]["code"] == "ON_LEAVE"
    assert "frank" in gone["reassignHeld"]["message"]
    assert len(await items(client, "leah", services)) == 2
    await working_hours.remove_leave(services, ada, "frank", *away)

    async with services.db.connection() as conn:
        await conn.execute("UPDATE principal SET active = true WHERE id = 'fiona'")
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    await slot_service.release(services, fiona, slots[1], None)
    async with services.db.connection() as conn:
        await conn.execute("UPDATE principal SET active = false WHERE id = 'fiona'")
    moved = (await gql(client, REASSIGN, ask("frank", False), token=token(services, "leah"))).ok()
    assert moved["reassignHeld"]["slotIds"] == [gid("Slot", slots[0])]
    assert await items(client, "leah", services) == []
    async with services.db.connection() as conn:
        holders = await conn.fetch(
            "SELECT holder, status FROM slot WHERE id = ANY($1::uuid[]) ORDER BY id",
            [uuid.UUID(s) for s in slots],
        )
    assert {(r["holder"], r["status"]) for r in holders} == {("frank", "claimed"), (None, "open")}
    assert ("slot.assigned", "leah", "fiona left") in await timeline(services, runs[0])

    # Released to the pool (to: null).
    frank = await principal_service.get(services, "frank")
    assert frank is not None
    async with services.db.connection() as conn:
        await conn.execute("UPDATE principal SET active = false WHERE id = 'frank'")
    released = await gql(
        client,
        REASSIGN,
        {"input": {"principalId": "frank", "to": None, "reason": "frank left too"}},
        token=token(services, "ada"),
    )
    assert released.ok()["reassignHeld"]["moved"] == 1
    assert await items(client, "ada", services) == []
    assert ("slot.released", "ada", "frank left too") in await timeline(services, runs[0])


async def test_idle_runs_clocks_by_hand_and_expiring_events(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await start(services, "triage", "C-9", {"size": 50})
    app = token(services, "app")
    kept = await gql(
        client,
        """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename } }""",
        {
            "input": {
                "event": "evidence",
                "payload": {"code": "E1"},
                "target": {"runId": gid("Run", run_id)},
            }
        },
        token=app,
    )
    assert kept.ok()["raiseEvent"]["__typename"] == "RaiseEventBuffered"
    assert await items(client, "leah", services) == []  # expires in 2 h: not yet "soon"
    frozen_clock.set(START + timedelta(minutes=70))
    (expiring,) = await items(client, "leah", services)
    assert expiring["reason"] == "EVENT_EXPIRING"
    assert expiring["until"] == (START + timedelta(hours=2)).isoformat()

    # goto the state whose slot awaits it: the event is delivered and the run moves on.
    ask = {"runId": gid("Run", run_id), "state": "big", "reason": "evidence came first"}
    moved = (await gql(client, GOTO, {"input": ask}, token=token(services, "leah"))).ok()
    assert (moved["goto"]["run"]["state"], moved["goto"]["run"]["status"]) == (
        "done",
        "COMPLETED",
    ), moved
    assert await items(client, "leah", services) == []

    # A run nobody touches for longer than TASKFLOW_IDLE_AFTER (14 days) is idle.
    idle_run = await start(services, "triage", "C-10", {"size": 3})
    frozen_clock.set(START + timedelta(days=15))
    idle = await items(client, "leah", services, reasons=["IDLE"])
    assert [(i["runId"], i["since"]) for i in idle] == [
        (gid("Run", idle_run), (START + timedelta(minutes=70)).isoformat())
    ]

    clocks = {"input": {"runId": gid("Run", idle_run), "reason": "customer on holiday"}}
    no = (await gql(client, PAUSE, clocks, token=token(services, "fiona"))).ok()
    assert no["pauseClocks"]["code"] == "FORBIDDEN"
    paused = (await gql(client, PAUSE, clocks, token=token(services, "leah"))).ok()
    assert paused["pauseClocks"]["__typename"] == "RunSuccess", paused
    assert await items(client, "leah", services, reasons=["IDLE"]) == []  # it changed
    again = (await gql(client, PAUSE, clocks, token=token(services, "leah"))).ok()
    assert again["pauseClocks"]["code"] == "CLOCKS_UNCHANGED"
    async with services.db.connection() as conn:
        pauses = await conn.fetchval(
            "SELECT pauses FROM sla_clock WHERE run = $1", uuid.UUID(idle_run)
        )
    assert pauses
    assert pauses[-1][1] is None

    resumed = (await gql(client, RESUME, clocks, token=token(services, "leah"))).ok()
    assert resumed["resumeClocks"]["__typename"] == "RunSuccess"
    twice = (await gql(client, RESUME, clocks, token=token(services, "leah"))).ok()
    assert twice["resumeClocks"]["code"] == "CLOCKS_UNCHANGED"
    lines = await timeline(services, idle_run)
    assert ("clocks.paused", "leah", "customer on holiday") in lines
    assert ("clocks.resumed", "leah", "customer on holiday") in lines


async def test_a_clock_paused_by_hand_cannot_breach_and_resumes_later(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await start(services, "triage", "C-20", {"size": 3})

    async def breach_timer() -> tuple[str, datetime]:
        async with services.db.connection() as conn:
            row = await conn.fetchrow(
                "SELECT status, due_at FROM timer WHERE run = $1 AND kind = 'breach'",
                uuid.UUID(run_id),
            )
        assert row is not None
        return str(row["status"]), row["due_at"]

    assert await breach_timer() == ("armed", START + timedelta(hours=2))
    clocks = {"input": {"runId": gid("Run", run_id), "reason": "waiting on the customer"}}
    frozen_clock.set(START + timedelta(minutes=30))
    paused = (await gql(client, PAUSE, clocks, token=token(services, "leah"))).ok()
    assert paused["pauseClocks"]["__typename"] == "RunSuccess"
    assert (await breach_timer())[0] == "cancelled"  # a clock standing still cannot breach
    frozen_clock.set(START + timedelta(hours=5))
    assert await timers.run_due(services, frozen_clock.now()) == 0
    resumed = (await gql(client, RESUME, clocks, token=token(services, "leah"))).ok()
    assert resumed["resumeClocks"]["__typename"] == "RunSuccess"
    # 30 minutes ran before the pause: 90 are left from the resumption.
    assert await breach_timer() == ("armed", START + timedelta(hours=6, minutes=30))


async def test_a_run_the_worker_moves_on_is_no_longer_unmatched(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await start(services, "triage", "C-30", {})
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    await slot_service.complete(
        services,
        fiona,
        await slot_of(services, run_id, "check"),
        event=None,
        payload={},
        expected_version=None,
    )
    assert [i["reason"] for i in await items(client, "leah", services)] == ["ROUTE_UNMATCHED"]
    frozen_clock.set(START + timedelta(days=3))
    assert await timers.run_due(services, frozen_clock.now()) >= 1  # the state's timeout
    async with services.db.connection() as conn:
        state = await conn.fetchval("SELECT state FROM run WHERE id = $1", uuid.UUID(run_id))
    assert state == "big"  # still active, and routed: no longer unmatched
    assert await items(client, "leah", services) == []


async def test_two_operators_racing_over_the_same_held_work_move_each_slot_once(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    frozen_clock.set(START)
    fiona = await principal_service.get(services, "fiona")
    ada, leah = (
        await principal_service.get(services, "ada"),
        await principal_service.get(services, "leah"),
    )
    assert fiona is not None
    assert ada is not None
    assert leah is not None
    runs = [await start(services, "triage", f"C-4{n}", {"size": n}) for n in range(6)]
    slots = [await slot_of(services, r, "check") for r in runs]
    for slot_id in slots:
        await slot_service.claim(services, fiona, slot_id, None)
    async with services.db.connection() as conn:
        await conn.execute("UPDATE principal SET active = false WHERE id = 'fiona'")

    to_frank, released = await asyncio.gather(
        operate.reassign_held(
            services, ada, principal_id="fiona", to="frank", reason="to frank", dry_run=False
        ),
        operate.reassign_held(
            services, leah, principal_id="fiona", to=None, reason="to the pool", dry_run=False
        ),
    )
    assert sorted(to_frank.moved + released.moved) == sorted(slots)
    async with services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT s.id::text AS id, s.holder, s.status, "
            "(SELECT count(*) FROM audit_event e WHERE e.slot = s.id "
            " AND e.kind IN ('slot.assigned', 'slot.released') AND e.actor IN ('ada', 'leah')) "
            "AS lines FROM slot s WHERE s.id = ANY($1::uuid[])",
            [uuid.UUID(s) for s in slots],
        )
    for row in rows:
        expected = ("frank", "claimed") if row["id"] in to_frank.moved else (None, "open")
        assert (row["holder"], row["status"]) == expected
        assert row["lines"] == 1
