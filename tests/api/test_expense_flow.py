"""The expense example driven from start to paid through GraphQL alone, by the right people."""

from __future__ import annotations

import httpx
import pytest

from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio


async def test_an_expense_goes_from_submitted_to_paid(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-2026-0042", w.EXPENSE
    )
    assert started["__typename"] == "StartRunSuccess"
    run = started["run"]
    assert (run["state"], run["status"], run["correlationKey"]) == (
        "submitted",
        "ACTIVE",
        "EXP-2026-0042",
    )

    # The submitter is in finance too, but may never review their own claim.
    assert [s for s in await w.inbox(client, people["sam"]) if s["name"] == "finance_review"] == []
    review = await w.slot_named(client, people["fiona"], "finance_review")
    assert review["label"] == "Review expense EXP-2026-0042: 1,250.00 GBP"
    assert review["subject"]["externalId"] == "EXP-2026-0042"
    assert review["runState"] == "submitted"
    assert review["fields"][0] == {
        "name": "decision",
        "type": "choice",
        "required": True,
        "choices": ["approve", "reject", "query"],
    }

    refused = await w.claim(client, people["sam"], review["id"])
    assert refused["__typename"] == "NotCandidate"
    assert "not user:sam" in refused["message"]

    claimed = await w.claim(client, people["fiona"], review["id"], review["version"])
    assert claimed["__typename"] == "SlotSuccess"
    assert claimed["slot"]["holder"] == "fiona"
    taken = await w.claim(client, people["frank"], review["id"])
    assert taken["__typename"] == "AlreadyClaimed"
    assert taken["holder"] == "fiona"
    assert "already claimed by 'fiona'" in taken["message"]

    not_holder = await w.complete(client, people["frank"], review["id"], {"decision": "approve"})
    assert not_holder["__typename"] == "NotHolder"

    bad = await w.complete(client, people["fiona"], review["id"], {"decision": "maybe", "extra": 1})
    assert bad["__typename"] == "PayloadInvalid"
    assert {p["field"] for p in bad["problems"]} == {"decision", "extra"}

    done = await w.complete(
        client, people["fiona"], review["id"], {"decision": "approve", "comment": "ok"}
    )
    assert done["__typename"] == "CompleteSuccess"
    assert done["run"]["state"] == "manager_approval"  # over 1000: the manager approves too
    assert done["slot"]["satisfiedBy"] == "fiona"

    approval = await w.slot_named(client, people["max"], "manager_approval")
    assert (await w.complete(client, people["max"], approval["id"], {"decision": "approve"}))[
        "run"
    ]["state"] == "payment"

    paid = await w.pay(client, people)
    assert paid["run"] == {"state": "paid", "status": "COMPLETED"}

    story = await w.timeline(client, people["leah"], run["id"])
    kinds = [entry["kind"] for entry in story]
    assert kinds[:3] == ["run.started", "state.entered", "slot.opened"]
    assert kinds[-2:] == ["state.entered", "run.completed"]
    refusals = [e for e in story if e["kind"] == "refused"]
    assert [(e["actor"], e["details"]["code"]) for e in refusals] == [
        ("sam", "NOT_CANDIDATE"),
        ("frank", "ALREADY_CLAIMED"),
        ("frank", "NOT_HOLDER"),
        ("fiona", "PAYLOAD_INVALID"),
    ]
    satisfied = [(e["actor"], e["details"]["slot"]) for e in story if e["kind"] == "slot.satisfied"]
    assert satisfied == [
        ("fiona", "finance_review"),
        ("max", "manager_approval"),
        ("paul", "payment"),
    ]


async def test_a_small_expense_skips_the_manager(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-1", amount=40)
    review = await w.slot_named(client, people["frank"], "finance_review")
    done = await w.complete(client, people["frank"], review["id"], {"decision": "approve"})
    assert done["run"]["state"] == "payment"


async def test_rejection_ends_the_run(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    await w.start_expense(client, people["app"], "EXP-2")
    review = await w.slot_named(client, people["fiona"], "finance_review")
    done = await w.complete(client, people["fiona"], review["id"], {"decision": "reject"})
    assert done["run"] == {"state": "rejected", "status": "COMPLETED"}
    assert await w.inbox(client, people["fiona"]) == []


async def test_start_is_idempotent_with_a_key_and_refused_without(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    first = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-3", w.EXPENSE, key="k-3"
    )
    again = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-3", w.EXPENSE, key="k-3"
    )
    assert again["created"] is False
    assert again["run"]["id"] == first["run"]["id"]
    refused = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-3", w.EXPENSE
    )
    assert refused["__typename"] == "RunExists"
    assert refused["runId"] == first["run"]["id"]
    assert "idempotencyKey" in refused["message"]


async def test_start_refusals_are_typed(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    unknown = await w.start(client, people["app"], "no-such-flow", "expense", "E", {})
    assert unknown["code"] == "NOT_FOUND"
    assert "expense-approval" in unknown["message"]
    wrong_type = await w.start(client, people["app"], "expense-approval", "ticket", "E", {})
    assert wrong_type["code"] == "INVALID_INPUT"
    assert "tracks subjects of type 'expense'" in wrong_type["message"]
    not_app = await w.start(client, people["fiona"], "expense-approval", "expense", "E", {})
    assert not_app["code"] == "FORBIDDEN"


async def test_the_submitter_may_withdraw_and_others_may_not(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start_expense(client, people["app"], "EXP-4")
    run_id = started["run"]["id"]
    move = """mutation($input: MoveInput!) { move(input: $input) {
        __typename ... on RunSuccess { run { state status } } ... on Refusal { code message }
        ... on MoveNotAllowed { reasons } } }"""
    # Fiona can read the run (she is a candidate of its slot) but is not the submitter.
    refused = (
        await gql(
            client, move, {"input": {"runId": run_id, "move": "withdraw"}}, token=people["fiona"]
        )
    ).ok()["move"]
    assert refused["code"] == "MOVE_NOT_ALLOWED"
    assert "user:sam" in refused["message"]
    moves = """query($id: ID!) { run(id: $id) { moves { name to allowed reasons } } }"""
    assert (await gql(client, moves, {"id": run_id}, token=people["sam"])).ok()["run"]["moves"] == [
        {"name": "withdraw", "to": "withdrawn", "allowed": True, "reasons": []}
    ]
    done = (
        await gql(
            client, move, {"input": {"runId": run_id, "move": "withdraw"}}, token=people["sam"]
        )
    ).ok()["move"]
    assert done["run"] == {"state": "withdrawn", "status": "COMPLETED"}
    assert await w.inbox(client, people["fiona"]) == []
