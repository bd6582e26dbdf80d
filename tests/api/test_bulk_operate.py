"""Runs that need attention, found by the runs list, and operator verbs over a filter.

Runs are started and left to breach the way they do in use (the frozen clock moves,
the worker fires the breach); the list is read over HTTP, then ``bulkOperate`` counts
(dry run), changes nothing, then pauses, moves and cancels in limited calls, scoped
to the workflows the caller operates.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from tests.api import attention
from tests.api.attention import OPERATIONS, START, slot_of, timeline, token
from tests.conftest import gql

pytestmark = pytest.mark.anyio

services = attention.services
RUNS = (OPERATIONS / "runs_page.graphql").read_text()
BULK = (OPERATIONS / "bulk_operate.graphql").read_text()


def gid(local: str) -> str:
    return relay.to_global_id("Run", local)


async def start(services: container.Services, workflow: str, ref: str) -> str:
    triage = workflow == "triage"
    attributes = {} if triage else {"owner": "o" * 250}
    return await attention.start(services, workflow, ref, attributes)


async def listed(
    client: httpx.AsyncClient, services: container.Services, who: str, **filter: Any
) -> tuple[set[str], int]:
    answer = await gql(client, RUNS, {"filter": filter, "first": 50}, token=token(services, who))
    page = answer.ok()["runs"]
    return {e["node"]["id"] for e in page["edges"]}, page["totalCount"]


async def bulk(
    client: httpx.AsyncClient, services: container.Services, who: str, **input: Any
) -> dict[str, Any]:
    answer = await gql(client, BULK, {"input": input}, token=token(services, who))
    result: dict[str, Any] = answer.ok()["bulkOperate"]
    return result


async def pause_two(
    client: httpx.AsyncClient, services: container.Services, needing: dict[str, Any]
) -> dict[str, Any]:
    """Leah pauses the clocks of two runs ``needing`` attention, for a customer holiday."""
    return await bulk(
        client,
        services,
        "leah",
        filter=needing,
        verb="PAUSE_CLOCKS",
        reason="customer holiday",
        dryRun=False,
        limit=2,
    )


async def _breached_world(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> dict[str, list[str]]:
    """Three triage cases breach unheld, one is claimed in time; one run of another
    workflow breaches too (its lead is not leah)."""
    frozen_clock.set(START)
    triage = [await start(services, "triage", f"C-{n}") for n in range(4)]
    other = [await start(services, "escalating-to-owner", "R-1")]
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    await slot_service.claim(services, fiona, await slot_of(services, triage[3], "check"), None)
    frozen_clock.set(START + timedelta(hours=3))
    await timers.run_due(services, frozen_clock.now())
    return {"breached": triage[:3], "held": triage[3:], "other": other}


async def test_runs_that_need_attention_are_listed_counted_and_scoped(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    world = await _breached_world(services, frozen_clock)
    breached = {gid(r) for r in world["breached"]}
    other = {gid(r) for r in world["other"]}

    ids, total = await listed(client, services, "ada", needsAttention=True)
    assert (ids, total) == (breached | other, 4)
    ids, total = await listed(
        client, services, "ada", attentionReasons=["BREACHED_UNHELD"], workflow="triage"
    )
    assert (ids, total) == (breached, 3)
    # Nothing failing: the reason filter narrows to none.
    assert await listed(client, services, "ada", attentionReasons=["TIMER_DEAD"]) == (set(), 0)
    # The claimed case needs nothing.
    ids, total = await listed(client, services, "ada", needsAttention=False, workflow="triage")
    assert (ids, total) == ({gid(world["held"][0])}, 1)
    # A lead sees the attention of the workflows she operates only.
    assert await listed(client, services, "leah", needsAttention=True) == (breached, 3)
    # Staff who operate nothing are refused, as needsAttention refuses them.
    refused = await gql(
        client, RUNS, {"filter": {"needsAttention": True}}, token=token(services, "fiona")
    )
    assert refused.error_codes == ["FORBIDDEN"]


async def test_bulk_operate_counts_first_then_applies_in_limited_calls(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    world = await _breached_world(services, frozen_clock)
    needing = {"needsAttention": True}

    # A dry run (the default) counts, names a sample and changes nothing.
    dry = await bulk(client, services, "leah", filter=needing, verb="CANCEL", reason="dupes")
    assert dry["__typename"] == "BulkOperateSuccess", dry
    assert (dry["dryRun"], dry["matched"], dry["applicable"], dry["applied"]) == (
        True,
        3,
        3,
        0,
    )
    assert dry["skippedForAccess"] == 0
    assert dry["remaining"] == 3
    assert set(dry["runIds"]) == {gid(r) for r in world["breached"]}
    assert await listed(client, services, "leah", needsAttention=True) == (
        {gid(r) for r in world["breached"]},
        3,
    )
    # Ada operates everything; over all active runs, the other workflow counts too.
    everything = await bulk(
        client, services, "ada", filter={"status": ["ACTIVE"]}, verb="PAUSE_CLOCKS", reason="x"
    )
    assert (everything["matched"], everything["skippedForAccess"]) == (5, 0)
    # Olga leads another workflow and reads the triage runs (a lead role is among the
    # check's delegates): she may operate none of them, so all are skipped for access.
    olga = await bulk(
        client, services, "olga", filter={"workflow": "triage"}, verb="CANCEL", reason="x"
    )
    assert (olga["matched"], olga["skippedForAccess"], olga["applicable"]) == (4, 4, 0), olga
    taken = await bulk(
        client,
        services,
        "olga",
        filter={"workflow": "triage"},
        verb="CANCEL",
        reason="x",
        dryRun=False,
    )
    assert (taken["applied"], taken["runIds"]) == (0, [])

    # Applied, two runs a call: the oldest first, each run's timeline names actor and reason.
    first = await pause_two(client, services, needing)
    assert (first["applied"], first["remaining"], first["refused"]) == (2, 1, [])
    # All started at one instant: oldest first, then by id.
    assert len(first["runIds"]) == 2
    assert first["runIds"] == sorted(
        first["runIds"], key=lambda g: relay.from_global_id(g, "id")[1]
    )
    for run_id in world["breached"]:
        paused = ("clocks.paused", "leah", "customer holiday") in await timeline(services, run_id)
        assert paused == (gid(run_id) in first["runIds"])
    # Called again: the paused ones are no longer applicable, the third is paused.
    second = await pause_two(client, services, needing)
    assert (second["applied"], second["notApplicable"], second["remaining"]) == (1, 2, 0)
    assert second["refused"] == []
    resumed = await bulk(
        client,
        services,
        "leah",
        filter={"workflow": "triage"},
        verb="RESUME_CLOCKS",
        reason="back",
        dryRun=True,
    )
    assert (resumed["applicable"], resumed["notApplicable"]) == (3, 1)

    # GOTO needs a workflow and a state of it; refusals are typed.
    no_state = await bulk(client, services, "leah", filter=needing, verb="GOTO", reason="r")
    assert (no_state["__typename"], no_state["code"]) == ("InvalidInput", "INVALID_INPUT")
    no_flow = await bulk(
        client, services, "leah", filter=needing, verb="GOTO", state="small", reason="r"
    )
    assert no_flow["code"] == "INVALID_INPUT"
    blank = await bulk(client, services, "leah", filter=needing, verb="CANCEL", reason=" ")
    assert blank["code"] == "INVALID_INPUT"
    nobody = await bulk(client, services, "fiona", filter=needing, verb="CANCEL", reason="r")
    assert (nobody["__typename"], nobody["code"]) == ("NotAllowed", "FORBIDDEN")

    moved = await bulk(
        client,
        services,
        "leah",
        filter={"workflow": "triage", "needsAttention": True},
        verb="GOTO",
        state="small",
        reason="closed in bulk",
        dryRun=False,
    )
    assert (moved["applied"], moved["remaining"]) == (3, 0), moved
    for run_id in world["breached"]:
        assert ("run.goto", "leah", "closed in bulk") in await timeline(services, run_id)
    assert await listed(client, services, "leah", needsAttention=True) == (set(), 0)
    # Ended now: cancelling them is not applicable, and nothing is taken.
    late = await bulk(
        client,
        services,
        "leah",
        filter={"workflow": "triage", "status": ["COMPLETED"]},
        verb="CANCEL",
        reason="r",
        dryRun=False,
    )
    assert (late["matched"], late["notApplicable"], late["applied"], late["runIds"]) == (
        3,
        3,
        0,
        [],
    )


async def test_bulk_operate_retries_and_discards_dead_timers(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    frozen_clock.set(START)
    run_id = await start(services, "escalating-to-owner", "R-9")
    frozen_clock.set(START + timedelta(hours=2))
    await timers.run_due(services, frozen_clock.now())
    for _ in range(12):  # every backoff runs out: the escalation is parked dead
        async with services.db.connection() as conn:
            due = await conn.fetchval(
                "SELECT min(due_at) FROM timer WHERE run = $1 AND status = 'armed' "
                "AND attempts > 0",
                uuid.UUID(run_id),
            )
        if due is None:
            break
        frozen_clock.set(due)
        await timers.run_due(services, frozen_clock.now())
    # A run of the same workflow without a dead timer, started only now: started with R-9,
    # its own escalation fell due inside those hours too and (with the backoff's jitter)
    # sometimes ran out of attempts as well.
    await start(services, "escalating-to-owner", "R-10")
    flow = {"workflow": "escalating-to-owner"}
    dry = await bulk(client, services, "max", filter=flow, verb="RETRY_DEAD_TIMERS", reason="r")
    assert (dry["applicable"], dry["runIds"]) == (1, [gid(run_id)]), dry
    done = await bulk(
        client,
        services,
        "max",
        filter=flow,
        verb="DISCARD_DEAD_TIMERS",
        reason="owner left the company",
        dryRun=False,
    )
    assert (done["applied"], done["remaining"]) == (1, 0), done
    assert ("timer.discarded", "max", "owner left the company") in await timeline(services, run_id)
    again = await bulk(client, services, "max", filter=flow, verb="RETRY_DEAD_TIMERS", reason="r")
    assert again["applicable"] == 0


async def test_two_operators_racing_one_bulk_cancel_cancel_each_run_once(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    world = await _breached_world(services, frozen_clock)
    ask = {
        "filter": {"workflow": "triage", "status": ["ACTIVE"]},
        "verb": "CANCEL",
        "reason": "duplicates",
        "dryRun": False,
    }
    first, second = await asyncio.gather(
        bulk(client, services, "leah", **ask, idempotencyKey="cancel-1"),
        bulk(client, services, "ada", **ask),
    )
    assert first["__typename"] == second["__typename"] == "BulkOperateSuccess", (first, second)
    # Every live triage run is cancelled exactly once, by one of the two; a run the other
    # took too answers RUN_NOT_ACTIVE (or, read after the cancel, was not taken at all).
    assert first["applied"] + second["applied"] == 4
    for answer in (first, second):
        assert {r["code"] for r in answer["refused"]} <= {"RUN_NOT_ACTIVE"}
    for run_id in world["breached"] + world["held"]:
        cancelled = [t for t in await timeline(services, run_id) if t[0] == "run.cancelled"]
        assert len(cancelled) == 1, cancelled
    # The same key and input answer the first answer again, changing nothing.
    again = await bulk(client, services, "leah", **ask, idempotencyKey="cancel-1")
    assert again == first


async def test_a_bulk_goto_goes_on_after_the_last_run_it_took(
    services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    world = await _breached_world(services, frozen_clock)
    # Runs moved to "big" stay live, so stay applicable: the cursor is how a caller goes on.
    ask = {
        "filter": {"workflow": "triage", "needsAttention": True},
        "verb": "GOTO",
        "state": "big",
        "reason": "sized by hand",
        "dryRun": False,
        "limit": 2,
    }
    first = await bulk(client, services, "leah", **ask)
    assert (first["applied"], first["remaining"]) == (2, 1), first
    assert first["endCursor"]
    second = await bulk(client, services, "leah", **ask, after=first["endCursor"])
    assert (second["applied"], second["remaining"]) == (1, 0), second
    assert set(first["runIds"] + second["runIds"]) == {gid(r) for r in world["breached"]}
    last = await bulk(client, services, "leah", **ask, after=second["endCursor"])
    assert (last["applied"], last["runIds"], last["endCursor"]) == (0, [], None)
    bad = await bulk(client, services, "leah", **ask, after="bm90IGEgY3Vyc29y")
    assert (bad["__typename"], bad["code"]) == ("InvalidInput", "INVALID_INPUT")
    for run_id in world["breached"]:
        moves = [t for t in await timeline(services, run_id) if t[0] == "run.goto"]
        assert moves == [("run.goto", "leah", "sized by hand")]
