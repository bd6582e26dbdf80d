"""Idempotency keys on mutations: a lost answer is settled by sending the request again.

Before (issue 15.6 / 16.2): only startRun and raiseEvent took a key; raiseEvent's keys
were shared by everybody (another actor's event with the same key came back as a
"duplicate" of the first and was dropped) and found by scanning the timeline.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow.service.common import idempotency
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_example_flows import RAISE
from tests.conftest import gql
from tests.lock_waits import until_waiting

pytestmark = pytest.mark.anyio

CLAIM = """mutation($input: ClaimInput!) { claim(input: $input) {
  __typename ... on SlotSuccess { slot { id holder } }
  ... on Refusal { code message } ... on AlreadyClaimed { holder } } }"""
RELEASE = """mutation($input: ReleaseInput!) { release(input: $input) {
  __typename ... on SlotSuccess { slot { holder } } ... on Refusal { code message } } }"""
COMPLETE = """mutation($input: CompleteInput!) { complete(input: $input) {
  __typename ... on CompleteSuccess { slot { id status } run { state } }
  ... on Refusal { code message } } }"""


async def _expense(client: httpx.AsyncClient, people: dict[str, str]) -> tuple[str, str]:
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-2026-0042", w.EXPENSE
    )
    review = await w.slot_named(client, people["fiona"], "finance_review")
    return started["run"]["id"], review["id"]


async def _call(
    client: httpx.AsyncClient, query: str, bearer: str, /, **fields: Any
) -> dict[str, Any]:
    data = (await gql(client, query, {"input": fields}, token=bearer or None)).ok()
    return next(iter(data.values()))


async def test_raise_event_keys_are_not_shared_between_actors(world: World) -> None:
    client, people = world.client, world.people
    vendor = {**w.VENDOR, "vendor_number": "V-7"}
    started = await w.start(client, people["app"], "vendor-onboarding", "vendor", "V-7", vendor)
    target = {"correlationKey": "V-7", "slotName": "upload"}
    slots = await m.upload_slots(client, people, started["run"]["id"])
    bank = await m.uploaded(client, slots["bank details"], token=people["app"], name="bank.pdf")
    coi = await m.uploaded(
        client, slots["certificate of incorporation"], token=people["ada"], name="coi.pdf"
    )

    def event(item: str, document: dict[str, Any]) -> dict[str, Any]:
        return {
            "event": "document-uploaded",
            "payload": {"document": document},
            "target": {**target, "item": item},
            "idempotencyKey": "mail-1",
        }

    first = await _call(client, RAISE, people["app"], **event("bank details", bank))
    assert (first["__typename"], first["duplicate"]) == ("RaiseEventSuccess", False)
    # Another sender (Ada, an admin, raising as an application) happens to use the same
    # key for its own event: it is not a duplicate of the first one, and it is not dropped.
    other = await _call(client, RAISE, people["ada"], **event("certificate of incorporation", coi))
    assert other["__typename"] == "RaiseEventSuccess"
    assert other["duplicate"] is False
    assert other["slot"]["payload"] == {"document": coi}
    # The first sender's retry is its own duplicate.
    again = await _call(client, RAISE, people["app"], **event("bank details", bank))
    assert again["duplicate"] is True
    assert again["slot"]["payload"] == {"document": bank}


async def test_a_retried_complete_returns_the_first_success(world: World) -> None:
    client, people = world.client, world.people
    run_id, slot_id = await _expense(client, people)
    await w.claim(client, people["fiona"], slot_id)
    done = {"slotId": slot_id, "payload": {"decision": "approve"}, "idempotencyKey": "c-1"}
    first = await _call(client, COMPLETE, people["fiona"], **done)
    assert first["__typename"] == "CompleteSuccess"
    again = await _call(client, COMPLETE, people["fiona"], **done)
    assert again == first
    # Without the key the same request is refused: the slot is done.
    bare = await _call(client, COMPLETE, people["fiona"], **{**done, "idempotencyKey": None})
    assert bare["code"] == "SLOT_NOT_OPEN"
    assert len(await w.timeline(client, people["ada"], run_id, kinds=["slot.satisfied"])) == 1


async def test_a_retried_refusal_is_the_first_refusal(world: World) -> None:
    client, people = world.client, world.people
    _, slot_id = await _expense(client, people)
    await w.claim(client, people["fiona"], slot_id)
    first = await _call(client, CLAIM, people["frank"], slotId=slot_id, idempotencyKey="f-1")
    assert (first["__typename"], first["holder"]) == ("AlreadyClaimed", "fiona")
    await _call(client, RELEASE, people["fiona"], slotId=slot_id)
    # The retry settles what happened to the first request: it was refused.
    again = await _call(client, CLAIM, people["frank"], slotId=slot_id, idempotencyKey="f-1")
    assert again == first
    fresh = await _call(client, CLAIM, people["frank"], slotId=slot_id, idempotencyKey="f-2")
    assert fresh["__typename"] == "SlotSuccess"


async def test_the_same_key_with_another_input_is_refused(world: World) -> None:
    client, people = world.client, world.people
    _, slot_id = await _expense(client, people)
    await _call(client, CLAIM, people["fiona"], slotId=slot_id, idempotencyKey="k")
    reused = await _call(
        client, RELEASE, people["fiona"], slotId=slot_id, reason="x", idempotencyKey="k"
    )
    # Another operation: its own key space.
    assert reused["__typename"] == "SlotSuccess"
    other = await _call(
        client, CLAIM, people["fiona"], slotId=slot_id, expectedVersion=7, idempotencyKey="k"
    )
    assert other["__typename"] == "IdempotencyKeyReused"
    assert other["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert "different input" in other["message"]


async def test_other_actors_never_collide_with_your_keys(world: World) -> None:
    client, people = world.client, world.people
    _, slot_id = await _expense(client, people)
    mine = await _call(client, CLAIM, people["fiona"], slotId=slot_id, idempotencyKey="same")
    assert mine["__typename"] == "SlotSuccess"
    theirs = await _call(client, CLAIM, people["frank"], slotId=slot_id, idempotencyKey="same")
    assert (theirs["__typename"], theirs["holder"]) == ("AlreadyClaimed", "fiona")


async def test_concurrent_duplicates_have_one_effect_and_one_answer(
    world: World, database_url: str
) -> None:
    client, people = world.client, world.people
    run_id, slot_id = await _expense(client, people)
    await w.claim(client, people["fiona"], slot_id)
    done = {"slotId": slot_id, "payload": {"decision": "approve"}, "idempotencyKey": "race"}
    # A lock on the slot row holds the first request inside its transaction, so the
    # duplicate arrives while the first is still deciding.
    blocker = await asyncpg.connect(database_url)
    try:
        tx = blocker.transaction()
        await tx.start()
        await blocker.execute("SELECT 1 FROM run FOR UPDATE")
        tasks = [
            asyncio.create_task(_call(client, COMPLETE, people["fiona"], **done)) for _ in range(2)
        ]
        # The first waits for the run, its duplicate for the key.
        await until_waiting(database_url, 2)
        await tx.rollback()
        answers = await asyncio.gather(*tasks)
    finally:
        await blocker.close()
    assert answers[0] == answers[1]
    assert answers[0]["__typename"] == "CompleteSuccess"
    assert len(await w.timeline(client, people["ada"], run_id, kinds=["slot.satisfied"])) == 1


async def test_keys_are_checked_and_pruned_after_their_retention(world: World) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    _, slot_id = await _expense(client, people)
    too_long = await _call(client, CLAIM, people["fiona"], slotId=slot_id, idempotencyKey="k" * 201)
    assert too_long["code"] == "INVALID_INPUT"
    await _call(client, CLAIM, people["fiona"], slotId=slot_id, idempotencyKey="old")
    assert await idempotency.prune(services) == 0
    frozen_clock.advance(idempotency.RETENTION + timedelta(seconds=1))
    assert await idempotency.prune(services) == 1


async def test_link_mutations_take_keys_and_never_mint_twice(world: World) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people)
    slot_id = (await m.upload_slots(client, people, run["id"]))["bank details"]
    mint = {
        "slotId": slot_id,
        "recipient": {"name": "Anna", "email": "onboarding@acme.example"},
        "idempotencyKey": "mint-1",
    }
    first = await _call(client, m.MINT, people["olga"], **mint)
    assert first["__typename"] == "MintMagicLinkSuccess"
    # The URL is shown once and never kept: a retry names the link instead of minting again.
    again = await _call(client, m.MINT, people["olga"], **mint)
    assert again["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert first["link"]["id"] in again["message"]
    assert len((await m.slot_links(client, people["olga"], slot_id))["links"]) == 1

    sent = await m.uploaded(client, slot_id, link=first["token"])
    use = {
        "token": first["token"],
        "payload": {"document": [sent]},
        "idempotencyKey": "use-1",
    }
    done = await _call(client, m.COMPLETE_WITH_LINK, "", **use)
    assert done["__typename"] == "CompleteWithLinkSuccess"
    # The outsider's browser lost the answer: the same request answers the same.
    assert await _call(client, m.COMPLETE_WITH_LINK, "", **use) == done
    bare = await _call(client, m.COMPLETE_WITH_LINK, "", **{**use, "idempotencyKey": None})
    assert bare["code"] == "LINK_UNUSABLE"


async def test_a_retried_claim_next_takes_one_slot(world: World) -> None:
    client, people = world.client, world.people
    await _expense(client, people)
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-8", w.EXPENSE)
    query = """mutation($input: ClaimNextInput!) { claimNext(input: $input) {
      __typename ... on SlotSuccess { slot { id holder } } ... on Refusal { code } } }"""
    first = await _call(client, query, people["fiona"], idempotencyKey="next-1")
    again = await _call(client, query, people["fiona"], idempotencyKey="next-1")
    assert first["__typename"] == "SlotSuccess"
    assert again == first
    held = [s for s in await w.inbox(client, people["fiona"]) if s["holder"] == "fiona"]
    assert len(held) == 1
