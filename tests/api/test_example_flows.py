"""The support and vendor examples driven to a terminal state through GraphQL alone."""

from __future__ import annotations

import functools
from typing import Any

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.compose import children as child_lane
from tests.api import magic as m
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

TICKET = w.TICKET
VENDOR = w.VENDOR


RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) {
  __typename
  ... on RaiseEventSuccess { duplicate run { state } slot { name status payload } }
  ... on Refusal { code message }
  ... on AmbiguousEvent { slots }
} }"""

MOVE = """mutation($input: MoveInput!) { move(input: $input) {
  __typename ... on RunSuccess { run { state status } } ... on Refusal { code message } } }"""


async def raise_event(
    client: httpx.AsyncClient,
    token: str,
    event: str,
    payload: dict[str, Any],
    target: dict[str, Any],
    key: str | None = None,
) -> dict[str, Any]:
    variables = {
        "input": {"event": event, "payload": payload, "target": target, "idempotencyKey": key}
    }
    return (await gql(client, RAISE, variables, token=token)).ok()["raiseEvent"]


async def move(
    client: httpx.AsyncClient, token: str, run_id: str, name: str, data: Any = None
) -> dict[str, Any]:
    variables = {"input": {"runId": run_id, "move": name, "input": data}}
    return (await gql(client, MOVE, variables, token=token)).ok()["move"]


async def take(client: httpx.AsyncClient, token: str, name: str) -> dict[str, Any]:
    """The named slot from the inbox, claimed by the caller if it is still open."""
    slot = await w.slot_named(client, token, name)
    if slot["status"] == "OPEN":
        claimed = await w.claim(client, token, slot["id"])
        assert claimed["__typename"] == "SlotSuccess", claimed
    return slot


async def test_a_support_ticket_from_triage_to_closed(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start(
        client, people["helpdesk"], "support-ticket", "ticket", "T-81723", TICKET
    )
    run_id = started["run"]["id"]

    # Only the triage desk sees the new ticket.
    assert [s["name"] for s in await w.inbox(client, people["tess"])] == ["triage"]
    assert await w.inbox(client, people["sasha"]) == []
    triage = await take(client, people["tess"], "triage")
    assert triage["priority"] == 2  # P2
    done = await w.complete(
        client, people["tess"], triage["id"], {"priority": "P2", "category": "billing"}
    )
    assert done["run"]["state"] == "open"

    # The owning team gets two slots; another team's agent does not.
    assert {s["name"] for s in await w.inbox(client, people["sven"])} == {
        "first_response",
        "resolution",
    }
    assert await w.inbox(client, people["fiona"]) == []
    response = await take(client, people["sasha"], "first_response")

    # Only the team may ask the customer; the ticket then waits for the reply.
    refused = await move(client, people["fiona"], run_id, "ask_customer", {"question": "?"})
    assert refused["__typename"] in {"NotFoundRefusal", "MoveNotAllowed"}
    asked = await move(
        client, people["sasha"], run_id, "ask_customer", {"question": "Which browser?"}
    )
    assert asked["run"]["state"] == "waiting_for_customer"

    # The help desk's mail gateway raises the reply by the reference quoted in the e-mail.
    reply = functools.partial(
        raise_event,
        client,
        people["helpdesk"],
        "customer-replied",
        {"reply": "Firefox 140"},
        {"correlationKey": "T-81723"},
        key="mail-1",
    )
    replied = await reply()
    assert replied["__typename"] == "RaiseEventSuccess"
    assert replied["run"]["state"] == "open"
    assert replied["slot"]["payload"] == {"reply": "Firefox 140"}
    again = await reply()  # the gateway sends the same mail again
    assert again["duplicate"] is True

    response = await take(client, people["sasha"], "first_response")
    await w.complete(client, people["sasha"], response["id"], {"message": "Fixed in 2.3"})
    resolution = await take(client, people["sven"], "resolution")
    resolved = await w.complete(
        client, people["sven"], resolution["id"], {"outcome": "fixed", "summary": "Export works"}
    )
    assert resolved["run"] == {"state": "resolved", "status": "ACTIVE"}
    checklist = "query($id: ID!) { run(id: $id) { checklist { name holds condition } } }"
    assert (await gql(client, checklist, {"id": run_id}, token=people["tara"])).ok()["run"] == {
        "checklist": [
            {
                "name": "resolution summary written",
                "holds": True,
                "condition": "payload.resolution.summary is set",
            }
        ]
    }

    reopened = await move(client, people["helpdesk"], run_id, "reopen")
    assert reopened["run"]["state"] == "open"
    cancel = """mutation($input: CancelRunInput!) { cancelRun(input: $input) {
        __typename ... on RunSuccess { run { status } } ... on Refusal { code message } } }"""
    refused = (
        await gql(
            client, cancel, {"input": {"runId": run_id, "reason": "dup"}}, token=people["sasha"]
        )
    ).ok()
    assert refused["cancelRun"]["code"] == "FORBIDDEN"
    cancelled = (
        await gql(
            client,
            cancel,
            {"input": {"runId": run_id, "reason": "duplicate of T-1"}},
            token=people["tara"],
        )
    ).ok()
    assert cancelled["cancelRun"]["run"]["status"] == "CANCELLED"
    kinds = [e["kind"] for e in await w.timeline(client, people["tara"], run_id)]
    assert kinds[-1] == "run.cancelled"
    assert "run.moved" in kinds


async def test_spam_is_closed_at_triage(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    await w.start(
        client,
        people["helpdesk"],
        "support-ticket",
        "ticket",
        "T-2",
        {**TICKET, "reference": "T-2"},
    )
    triage = await w.slot_named(client, people["tess"], "triage")
    done = await w.complete(
        client, people["tess"], triage["id"], {"priority": "P4", "category": "spam"}
    )
    assert done["run"] == {"state": "closed", "status": "COMPLETED"}


async def test_a_vendor_is_onboarded_after_documents_and_reviews(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    started = await w.start(
        client, people["olga"], "vendor-onboarding", "vendor", "V-20931", VENDOR
    )
    assert started["__typename"] == "NotAllowed"  # procurement is a lead, not an application
    started = await w.start(client, people["app"], "vendor-onboarding", "vendor", "V-20931", VENDOR)
    assert started["run"]["state"] == "collecting"  # the VAT screen passed straight through

    uploads = [s for s in await w.inbox(client, people["olga"]) if s["name"] == "upload"]
    assert sorted(s["label"] for s in uploads) == [
        "Upload bank details for Acme Logistics GmbH",
        "Upload certificate of incorporation for Acme Logistics GmbH",
    ]
    # Reviews wait until every document is in: nothing for legal yet.
    assert await w.inbox(client, people["lee"]) == []
    for slot in uploads:
        sent = await m.uploaded(client, slot["id"], token=people["olga"])
        done = await w.complete(client, people["olga"], slot["id"], {"document": sent})
        assert done["__typename"] == "CompleteSuccess"
    legal = await w.slot_named(client, people["lee"], "legal_review")
    done = await w.complete(client, people["lee"], legal["id"], {"decision": "approve"})
    # Personal data: the onboarding awaits a security assessment, a child run of its own.
    assert done["run"] == {"state": "assessing", "status": "ACTIVE"}
    while await child_lane.run_due(services):
        pass
    assess = await w.slot_named(client, people["seb"], "assess")
    done = await w.complete(
        client, people["seb"], assess["id"], {"verdict": "approve", "risk": "medium"}
    )
    assert done["run"] == {"state": "assessed", "status": "COMPLETED"}
    while await child_lane.run_due(services):
        pass
    found = await gql(
        client, "query($id: ID!) { run(id: $id) { state status } }",
        {"id": started["run"]["id"]}, token=people["ada"],
    )  # fmt: skip
    assert found.ok()["run"] == {"state": "onboarded", "status": "COMPLETED"}


async def test_no_security_review_without_personal_data_and_a_bad_vat_is_rejected(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    plain = {
        **VENDOR,
        "vendor_number": "V-2",
        "handles_personal_data": False,
        "required_documents": [],
    }
    started = await w.start(client, people["app"], "vendor-onboarding", "vendor", "V-2", plain)
    assert started["run"]["state"] == "collecting"
    assert await w.inbox(client, people["seb"]) == []
    legal = await w.slot_named(client, people["lee"], "legal_review")
    done = await w.complete(client, people["lee"], legal["id"], {"decision": "approve"})
    assert done["run"]["state"] == "onboarded"

    bad = {**VENDOR, "vendor_number": "V-3", "vat_number": "12"}
    started = await w.start(client, people["app"], "vendor-onboarding", "vendor", "V-3", bad)
    assert started["run"] == {**started["run"], "state": "rejected", "status": "COMPLETED"}
    kinds = [e["kind"] for e in await w.timeline(client, people["ada"], started["run"]["id"])]
    assert "state.redirected" in kinds


async def test_raise_event_targets_and_refusals(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start(
        client,
        people["app"],
        "vendor-onboarding",
        "vendor",
        "V-9",
        {**VENDOR, "vendor_number": "V-9"},
    )
    subject = {"subject": {"type": "vendor", "externalId": "V-9"}}
    slots = await m.upload_slots(client, people, started["run"]["id"])
    bank = await m.uploaded(client, slots["bank details"], token=people["app"])
    ambiguous = await raise_event(
        client, people["app"], "document-uploaded", {"document": "x"}, subject
    )
    assert ambiguous["__typename"] == "AmbiguousEvent"
    assert ambiguous["slots"] == ["upload[0]", "upload[1]"]
    narrowed = await raise_event(
        client,
        people["app"],
        "document-uploaded",
        {"document": bank},
        {**subject, "slotName": "upload", "item": "bank details"},
    )
    assert narrowed["slot"]["status"] == "SATISFIED"
    nothing = await raise_event(client, people["app"], "no-such-event", {}, subject)
    assert nothing["code"] == "NO_SLOT_WAITING"
    # A staff member may raise an event only on a slot they are a candidate for.
    outsider = await raise_event(
        client,
        people["fiona"],
        "document-uploaded",
        {"document": "x"},
        {"correlationKey": "V-9"},
    )
    assert outsider["code"] == "NO_SLOT_WAITING"
    two_targets = await raise_event(
        client, people["app"], "document-uploaded", {}, {"correlationKey": "V-9", **subject}
    )
    assert two_targets["code"] == "INVALID_INPUT"
    bad_payload = await raise_event(
        client,
        people["app"],
        "document-uploaded",
        {"nope": 1},
        {"correlationKey": "V-9", "slotName": "upload"},
    )
    assert bad_payload["code"] == "PAYLOAD_INVALID"
