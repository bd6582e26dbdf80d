"""``addCandidate`` over HTTP: who may widen a slot, what it lets in, and each refusal.

The expense's ``finance_review`` is for finance, not the submitter (sam), delegated to
finance leads (leah, a lead granted expense-approval).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from taskflow.service.delivery import webhook_delivery
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_webhooks_api import drain, listening
from tests.api.test_webhooks_api import settings as settings  # loopback allowed
from tests.conftest import gql
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

ADD = """mutation($input: AddCandidateInput!) { addCandidate(input: $input) { __typename
  ... on SlotSuccess { slot { id version status } }
  ... on Refusal { code message } } }"""
SLOT = """query($id: ID!) { slot(id: $id) { id version status } }"""


async def add(client: httpx.AsyncClient, token: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("reason", "month-end backlog")
    answer: dict[str, Any] = (await gql(client, ADD, {"input": fields}, token=token)).ok()[
        "addCandidate"
    ]
    return answer


async def version_of(client: httpx.AsyncClient, token: str, slot_id: str) -> int:
    return int((await gql(client, SLOT, {"id": slot_id}, token=token)).ok()["slot"]["version"])


async def test_who_may_add_a_candidate_and_who_is_refused(world: World) -> None:
    client, people = world.client, world.people
    started = await w.start_expense(client, people["app"], "EXP-AC-1")
    slot = await w.slot_named(client, people["fiona"], "finance_review")
    slot_id, version = slot["id"], slot["version"]
    # Nobody outside the slot's run sees it; a candidate, or the application that started
    # the run, sees it but may not widen it.
    for who, code in (("sid", "NOT_FOUND"), ("tara", "NOT_FOUND"), ("fiona", "FORBIDDEN"),
                      ("app", "FORBIDDEN")):  # fmt: skip
        refused = await add(client, people[who], slotId=slot_id, principal="lee")
        assert refused["code"] == code, (who, refused)
    # Bad input: both or neither key, someone unknown, no reason.
    for fields in ({"principal": "lee", "role": "legal"}, {}, {"principal": "nobody"},
                   {"principal": "lee", "reason": "  "}):  # fmt: skip
        refused = await add(client, people["leah"], slotId=slot_id, **fields)
        assert refused["code"] == "INVALID_INPUT", (fields, refused)
    # The submitter stays out of their own approval; a stale copy is refused.
    kept_out = await add(client, people["leah"], slotId=slot_id, principal="sam")
    assert kept_out["code"] == "NOT_CANDIDATE", kept_out
    assert "sam" in kept_out["message"]
    stale = await add(
        client, people["leah"], slotId=slot_id, principal="lee", expectedVersion=version + 5
    )
    assert stale["code"] == "STALE_VERSION"
    assert await version_of(client, people["leah"], slot_id) == version  # nothing changed
    assert all(s["name"] != "finance_review" for s in await w.inbox(client, people["lee"]))

    # The delegate adds lee: lee now finds it in the inbox and takes it.
    added = await add(
        client, people["leah"], slotId=slot_id, principal="lee", expectedVersion=version
    )
    assert added["__typename"] == "SlotSuccess", added
    assert added["slot"]["version"] == version + 1
    again = await add(client, people["max"], slotId=slot_id, principal="lee")
    assert again["code"] == "ALREADY_CANDIDATE", again
    by_role = await add(client, people["ada"], slotId=slot_id, role="security")
    assert by_role["__typename"] == "SlotSuccess", by_role
    assert (await add(client, people["ada"], slotId=slot_id, role="security"))["code"] == (
        "ALREADY_CANDIDATE"
    )
    (offered,) = [s for s in await w.inbox(client, people["lee"]) if s["id"] == slot_id]
    assert offered["name"] == "finance_review"
    assert (await w.claim(client, people["lee"], slot_id))["__typename"] == "SlotSuccess"
    lines = await w.timeline(client, people["leah"], started["run"]["id"], ["slot.candidate_added"])
    assert [(x["actor"], x["reason"], x["details"]["added"]) for x in lines] == [
        ("leah", "month-end backlog", "user:lee"),
        ("ada", "month-end backlog", "role:security"),
    ]
    refusals = await w.timeline(client, people["leah"], started["run"]["id"], ["refused"])
    assert {x["details"]["code"] for x in refusals} >= {"NOT_CANDIDATE", "STALE_VERSION"}

    # A slot done with takes no candidate.
    await w.complete(client, people["lee"], slot_id, {"decision": "approve"})
    closed = await add(client, people["leah"], slotId=slot_id, role="legal")
    assert closed["code"] == "SLOT_NOT_OPEN", closed


async def test_an_added_candidate_is_a_webhook_event(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    """``slot.candidate_added`` reaches an endpoint subscribed to it, sent by the delivery
    worker (signed as every event), with who was let in and nothing of the audience."""
    client, people = world.client, world.people
    await listening(
        client, people["ada"], receiver, workflows=["expense-approval"],
        eventTypes=["slot.candidate_added"],
    )  # fmt: skip
    started = await w.start_expense(client, people["app"], "EXP-AC-HOOK")
    slot = await w.slot_named(client, people["fiona"], "finance_review")
    added = await add(client, people["leah"], slotId=slot["id"], role="legal")
    assert added["__typename"] == "SlotSuccess", added
    assert await drain(sender, world.clock) == 1
    run_id = str(started["run"]["id"])
    assert receiver.types_of(run_id) == ["slot.candidate_added"]
    [event] = [p for p in receiver.verified() if p["data"]["run"]["id"] == run_id]
    assert event["data"]["added"] == "role:legal"
    assert event["data"]["actor"] == "leah"
    assert "audience" not in json.dumps(event)
