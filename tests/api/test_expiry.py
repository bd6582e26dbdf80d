"""Slots that expire: after a duration (a quote, reopened once then escalated) or at a
subject's date (an offer); warnings with a link for outsiders; links and holders let go;
a date in the past applied at once; a bad date refused at start; complete against expire.

The frozen clock starts on Tuesday 1 December 2026, 09:00 UTC; timers fire through
``run_due(now)`` (the worker's entry point) with a moved clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.core.definition.checks import problems, validate
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import expiry_workflows
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.reminders import at, fire, notifications
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

expiring, api, tokens = app_with("expiring", Path(__file__).parent / "expiry_workflows.py")

CLIENT = "client@quotes.example"
SLOTS = """query($id: ID!) { run(id: $id) { state status slots {
  id name status outcome holder expiresAt openedAt links { id status } } } }"""


NODE = """query($id: ID!) { node(id: $id) {
  ... on Slot { id status outcome holder expiresAt } } }"""


REPORT = """query($from: DateTime!, $to: DateTime) {
  slaReport(from: $from, to: $to, groupBy: [WORKFLOW]) {
  rows { workflow opened stillOpen } } }"""


async def slot_node(api: httpx.AsyncClient, token: str, slot_id: str) -> dict[str, Any]:
    return dict((await gql(api, NODE, {"id": slot_id}, token=token)).ok()["node"])


async def run_of(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    return dict((await gql(api, SLOTS, {"id": run_id}, token=token)).ok()["run"])


async def start_quote(api: httpx.AsyncClient, tokens: dict[str, str], ref: str) -> str:
    attributes = {"reference": ref, "client_email": CLIENT}
    started = await w.start(api, tokens["app"], "quote", "quote", ref, attributes)
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def test_a_quote_expires_is_reopened_once_then_escalated(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    run_id = await start_quote(api, tokens, "Q-1")
    [sign] = (await run_of(api, tokens["leah"], run_id))["slots"]
    assert sign["expiresAt"] == at(4, 9).isoformat()
    claimed = await w.claim(api, tokens["fiona"], sign["id"])
    assert claimed["slot"]["holder"] == "fiona"
    link = await m.mint(api, tokens["fiona"], sign["id"], email=CLIENT, name=None)
    assert link["__typename"] == "MintMagicLinkSuccess", link

    # A day before it expires, the client hears "expires in 1 day", a link asked for them.
    assert await fire(expiring, at(3, 9)) == 1
    [note] = await notifications(api, tokens["app"], "OUTSIDERS")
    assert note["kind"] == "expiry"
    assert note["recipientEmail"] == CLIENT
    assert note["linkRequested"] is True
    assert "Sign quote Q-1: expires in 1 day" in note["message"]

    # It expires: outcome expired, holder released, the link dead; the state reopens once.
    assert await fire(expiring, at(4, 9)) >= 1
    run = await run_of(api, tokens["leah"], run_id)
    assert run["state"] == "signing"
    assert run["status"] == "ACTIVE"
    [second] = run["slots"]  # the run's current visit
    first = await slot_node(api, tokens["leah"], sign["id"])
    assert (first["status"], first["outcome"], first["holder"]) == ("EXPIRED", "expired", None)
    assert second["status"] == "OPEN"
    assert second["expiresAt"] == at(7, 9).isoformat()
    used = await gql(api, m.COMPLETE_WITH_LINK, {"input": {"token": link["token"], "payload": {}}})
    assert used.ok()["completeWithLink"]["code"] == "LINK_UNUSABLE"
    late = await w.complete(api, tokens["fiona"], first["id"], {})
    assert late["__typename"] == "SlotNotOpen"
    lines = await w.timeline(api, tokens["leah"], run_id, ["slot.expired", "expiry.warned"])
    assert [line["kind"] for line in lines] == ["expiry.warned", "slot.expired"]
    assert lines[1]["details"]["outcome"] == "expired"
    assert lines[1]["details"]["holder"] == "fiona"

    # The second expiry escalates; nothing of the run is left armed.
    await fire(expiring, at(7, 9))
    run = await run_of(api, tokens["leah"], run_id)
    assert run["state"] == "escalated"
    assert run["status"] == "COMPLETED"
    async with expiring.db.connection() as conn:
        armed = await conn.fetchval(
            "SELECT count(*) FROM timer WHERE run = $1 AND status = 'armed'", run_id_uuid(run_id)
        )
    assert armed == 0


def run_id_uuid(global_id: str) -> str:
    return relay.from_global_id(global_id)[1]


async def test_a_signed_quote_does_not_expire(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    run_id = await start_quote(api, tokens, "Q-2")
    [sign] = (await run_of(api, tokens["leah"], run_id))["slots"]
    done = await w.complete(api, tokens["fiona"], sign["id"], {})
    assert done["__typename"] == "CompleteSuccess"
    assert done["run"]["state"] == "signed"
    assert await fire(expiring, at(8, 9)) == 0


async def test_an_offer_past_its_date_at_start_expires_at_once(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    attributes = {"offer_valid_until": "2026-11-30"}  # ended at midnight in Berlin
    started = await w.start(api, tokens["app"], "offer", "offer", "O-1", attributes)
    run_id = started["run"]["id"]
    [accept] = (await run_of(api, tokens["leah"], run_id))["slots"]
    assert accept["expiresAt"] == "2026-11-30T23:00:00+00:00"
    assert await fire(expiring, expiring.clock.now()) == 1
    run = await run_of(api, tokens["leah"], run_id)
    assert run["state"] == "lapsed"
    assert (await slot_node(api, tokens["leah"], accept["id"]))["outcome"] == "expired"
    # The SLA report counts the expired slot once, as an ended one (measured when it ended).
    window = {"from": at(1, 0).isoformat(), "to": at(2, 0).isoformat()}
    report = await gql(api, REPORT, window, token=tokens["ada"])
    rows = [r for r in report.ok()["slaReport"]["rows"] if r["workflow"] == "offer"]
    assert [(r["opened"], r["stillOpen"]) for r in rows] == [(1, 0)]


async def test_an_offer_date_that_does_not_parse_is_refused_at_start(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    attributes = {"offer_valid_until": "next friday"}
    variables = {
        "input": {
            "workflow": "offer",
            "subject": {"type": "offer", "externalId": "O-2", "attributes": attributes},
        }
    }
    query = w.START.replace("message }", "message } ... on InvalidInput { field }")
    refused = (await gql(api, query, variables, token=tokens["app"])).ok()["startRun"]
    assert refused["__typename"] == "InvalidInput"
    assert refused["field"] == "subject.offer_valid_until"
    assert "next friday" in refused["message"]
    runs = await gql(
        api, '{ runs(first: 5, filter: {workflow: "offer"}) { totalCount } }', token=tokens["ada"]
    )
    assert runs.ok()["runs"]["totalCount"] == 0


def test_an_unknown_time_zone_is_refused_at_load() -> None:
    offer = expiry_workflows.Offer.definition
    assert offer is not None
    accept = offer.slot("open", "accept")
    assert accept.expires is not None
    zoned = dataclasses.replace(accept.expires, zone="Mars/Olympus_Mons")
    opened = dataclasses.replace(
        offer.state("open"), slots=(dataclasses.replace(accept, expires=zoned),)
    )
    bad = dataclasses.replace(
        offer, states=tuple(opened if s.name == "open" else s for s in offer.states)
    )
    with pytest.raises(problems.DefinitionError) as refused:
        validate.validate(bad)
    assert "UNKNOWN_TIME_ZONE" in refused.value.codes
    assert "Mars/Olympus_Mons" in str(refused.value)


async def test_completed_in_the_instant_it_expires_settles_to_one_outcome(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    """Twelve quotes; each is completed over HTTP while the worker fires its expiry at the
    same instant, on other connections: each slot ends satisfied or expired, never both."""
    runs = [await start_quote(api, tokens, f"Q-R{i}") for i in range(12)]
    slots = [(await run_of(api, tokens["leah"], r))["slots"][0]["id"] for r in runs]
    instant = at(4, 9)
    expiring.clock.set(instant)  # type: ignore[attr-defined]

    async def complete(slot_id: str) -> str:
        answer = await w.complete(api, tokens["fiona"], slot_id, {})
        return str(answer["__typename"])

    answers = await asyncio.gather(
        *(complete(s) for s in slots),
        timers.run_due(expiring, instant),
        timers.run_due(expiring, instant + timedelta(microseconds=1)),
    )
    async with expiring.db.connection() as conn:
        for run_id, answer in zip(runs, answers[: len(runs)], strict=True):
            rows = await conn.fetch(
                "SELECT kind FROM audit_event WHERE run = $1 "
                "AND kind IN ('slot.satisfied', 'slot.expired') ORDER BY id",
                run_id_uuid(run_id),
            )
            kinds = [r["kind"] for r in rows]
            first = await conn.fetchval(
                "SELECT status FROM slot WHERE run = $1 AND visit = "
                "(SELECT min(visit) FROM slot WHERE run = $1)",
                run_id_uuid(run_id),
            )
            if answer == "CompleteSuccess":
                assert (kinds[0], first) == ("slot.satisfied", "satisfied"), kinds
            else:
                assert answer == "SlotNotOpen"
                assert (kinds[0], first) == ("slot.expired", "expired"), kinds
                assert "slot.satisfied" not in kinds


async def test_the_vendors_document_requests_expire_and_the_onboarding_with_them(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    """The example's story: 21 days for the documents; "expires in 2 days" with a link two
    days before; then the requests lapse, the reviews never open and the run ends expired."""
    started = await m.start_vendor(api, tokens)
    run_id = started["id"]
    uploads = await m.upload_slots(api, tokens, run_id)
    sent = await m.uploaded(api, uploads["bank details"], token=tokens["olga"])
    done = await w.complete(api, tokens["olga"], uploads["bank details"], {"document": sent})
    assert done["__typename"] == "CompleteSuccess"
    await fire(expiring, at(20, 9))
    warned = [
        n for n in await notifications(api, tokens["app"], "OUTSIDERS") if n["kind"] == "expiry"
    ]
    assert [n["slotId"] for n in warned] == [uploads["certificate of incorporation"]]
    assert warned[0]["linkRequested"] is True
    assert "expires in 2 days" in warned[0]["message"]
    await fire(expiring, at(22, 9))
    run = await run_of(api, tokens["olga"], run_id)
    assert run["state"] == "expired"
    assert run["status"] == "COMPLETED"
    lapsed = await slot_node(api, tokens["olga"], uploads["certificate of incorporation"])
    assert lapsed["outcome"] == "expired"
    kept = await slot_node(api, tokens["olga"], uploads["bank details"])
    assert kept["outcome"] == "completed"


MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename
  ... on Refusal { code message } } }"""


async def test_a_slot_held_by_a_pausing_state_expires_once_the_run_is_back(
    api: httpx.AsyncClient, tokens: dict[str, str], expiring: container.Services
) -> None:
    run_id = await start_quote(api, tokens, "Q-P")
    [sign] = (await run_of(api, tokens["leah"], run_id))["slots"]

    async def move(name: str) -> None:
        answer = await gql(api, MOVE, {"input": {"runId": run_id, "move": name}},
                           token=tokens["fiona"])  # fmt: skip
        assert answer.ok()["move"]["__typename"] == "RunSuccess", answer.body

    await move("ask_client")
    await fire(expiring, at(4, 9))  # its instant passes while the run waits elsewhere
    assert (await slot_node(api, tokens["leah"], sign["id"]))["status"] == "OPEN"
    async with expiring.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT status, last_error FROM timer WHERE key = $1",
            f"{relay.from_global_id(sign['id'])[1]}:expire",
        )
    assert dict(row or {}) == {"status": "cancelled", "last_error": None}  # set aside, no fault
    expiring.clock.set(at(5, 9))  # type: ignore[attr-defined]
    await move("answered")
    assert (await slot_node(api, tokens["leah"], sign["id"]))["status"] == "OPEN"
    assert await fire(expiring, at(5, 9)) >= 1  # back: the instant is past, it expires now
    assert (await slot_node(api, tokens["leah"], sign["id"]))["outcome"] == "expired"
