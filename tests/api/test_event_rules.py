"""raiseEvent obeys the same rules as complete, declared raisers, and buffers early events.

Everything goes through GraphQL over HTTP; the worker is stepped with ``run_due``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import event_fixtures
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

# The fixtures of services with event_workflows.py loaded.
event_services = event_fixtures.event_services
api = event_fixtures.api
tokens = event_fixtures.tokens

RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) {
  __typename
  ... on RaiseEventSuccess { duplicate run { state } slot { name status payload satisfiedBy } }
  ... on RaiseEventBuffered { event duplicate arrivedAt expiresAt run { id state } }
  ... on NotRaiser { event raisers }
  ... on NotHolder { holder }
  ... on Refusal { code message }
} }"""


async def raise_event(
    client: httpx.AsyncClient,
    token: str,
    event: str,
    payload: dict[str, Any] | None,
    target: dict[str, Any],
    key: str | None = None,
) -> dict[str, Any]:
    variables = {
        "input": {"event": event, "payload": payload, "target": target, "idempotencyKey": key}
    }
    return dict((await gql(client, RAISE, variables, token=token)).ok()["raiseEvent"])


async def start_parcel(client: httpx.AsyncClient, tokens: dict[str, str], ref: str) -> str:
    started = await w.start(client, tokens["app"], "delivery", "parcel", ref, {"reference": ref})
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def lines(
    client: httpx.AsyncClient, token: str, run_id: str, kinds: list[str]
) -> list[dict[str, Any]]:
    return await w.timeline(client, token, run_id, kinds)


# -- the holder rule ---------------------------------------------------------------------------


async def test_a_staff_raise_on_a_held_slot_obeys_the_holder_rule_like_complete(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    """The exploit: complete was refused NOT_HOLDER, the same answer as raiseEvent went through."""
    started = await w.start(api, tokens["app"], "expense-approval", "expense", "E-1", w.EXPENSE)
    run_id = started["run"]["id"]
    review = await w.slot_named(api, tokens["fiona"], "finance_review")
    assert (await w.claim(api, tokens["fiona"], review["id"]))["__typename"] == "SlotSuccess"
    answer = {"decision": "approve"}

    completed = await w.complete(api, tokens["frank"], review["id"], answer)
    assert completed["code"] == "NOT_HOLDER"
    target = {"correlationKey": w.EXPENSE["reference"]}
    raised = await raise_event(api, tokens["frank"], "reviewed", answer, target)
    assert raised["__typename"] == "NotHolder", raised
    assert raised["holder"] == "fiona"

    query = "query($id: ID!) { run(id: $id) { state } }"
    state = await gql(api, query, {"id": run_id}, token=tokens["ada"])
    assert state.ok()["run"]["state"] == "submitted"
    refused = await lines(api, tokens["ada"], run_id, ["refused"])
    assert any(
        r["actor"] == "frank" and r["details"]["action"] == "raise reviewed" for r in refused
    ), refused

    # An application may not decide for finance: "reviewed" is raised by finance only,
    # even by an application granted the workflow.
    by_app = await raise_event(api, tokens["app"], "reviewed", answer, target)
    assert by_app["__typename"] == "NotRaiser", by_app
    assert by_app["raisers"] == "role:finance and not user:{subject.submitted_by}"
    # The help desk's gateway is not granted expenses at all: it sees no such run.
    helpdesk = await raise_event(api, tokens["helpdesk"], "reviewed", answer, target)
    assert helpdesk["__typename"] == "NoSlotWaiting", helpdesk

    # The holder may raise it, as they may complete it.
    by_holder = await raise_event(api, tokens["fiona"], "reviewed", answer, target)
    assert by_holder["__typename"] == "RaiseEventSuccess", by_holder
    assert by_holder["slot"]["satisfiedBy"] == "fiona"


async def test_a_staff_raise_on_an_open_slot_needs_candidacy_and_the_raisers(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run_id = await start_parcel(api, tokens, "P-1")
    target = {"runId": run_id}
    # Sasha (support) is a candidate of the slot, but "received" is raised by finance only.
    refused = await raise_event(api, tokens["sasha"], "received", {}, target)
    assert refused["__typename"] == "NotRaiser", refused
    assert refused["code"] == "NOT_RAISER"
    assert refused["raisers"] == "role:finance or role:lead"
    # An application is held to the declared raisers too.
    by_app = await raise_event(api, tokens["app"], "received", {}, target)
    assert by_app["__typename"] == "NotRaiser", by_app
    # Max (a manager of every workflow, role lead) is among the raisers and may read the
    # run, but is no candidate.
    max_ = await raise_event(api, tokens["max"], "received", {}, target)
    assert max_["__typename"] == "NotCandidate", max_
    # Paul is neither candidate nor raiser: the run is not even visible to him.
    paul = await raise_event(api, tokens["paul"], "received", {}, target)
    assert paul["code"] in ("NO_SLOT_WAITING", "NOT_FOUND"), paul
    refusals = await lines(api, tokens["ada"], run_id, ["refused"])
    codes = {r["actor"]: r["details"]["code"] for r in refusals}
    assert codes == {"sasha": "NOT_RAISER", "app": "NOT_RAISER", "max": "NOT_CANDIDATE"}

    done = await raise_event(api, tokens["fiona"], "received", {"note": "ok"}, target)
    assert done["__typename"] == "RaiseEventSuccess", done
    assert done["run"]["state"] == "arrived"


# -- buffered events ---------------------------------------------------------------------------


async def test_early_events_are_kept_and_delivered_in_arrival_order(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run_id = await start_parcel(api, tokens, "P-2")
    target = {"correlationKey": "P-2"}
    first = await raise_event(api, tokens["app"], "scanned", {"code": "A"}, target, key="scan-a")
    assert first["__typename"] == "RaiseEventBuffered", first
    assert first["event"] == "scanned"
    assert first["duplicate"] is False
    assert first["run"]["state"] == "announced"
    again = await raise_event(api, tokens["app"], "scanned", {"code": "A"}, target, key="scan-a")
    assert again["__typename"] == "RaiseEventBuffered"
    assert again["duplicate"] is True
    second = await raise_event(api, tokens["fiona"], "scanned", {"code": "B"}, target)
    assert second["__typename"] == "RaiseEventBuffered", second
    # The run keeps at most two.
    full = await raise_event(api, tokens["app"], "scanned", {"code": "C"}, target)
    assert full["code"] == "NO_SLOT_WAITING"
    assert "keeps 2" in full["message"]
    # A payload no waiting slot could take is refused at once.
    bad = await raise_event(api, tokens["app"], "scanned", {"nope": 1}, target)
    assert bad["code"] == "PAYLOAD_INVALID"
    # Staff who are not among the raisers may not send it early.
    sasha = await raise_event(api, tokens["sasha"], "scanned", {"code": "S"}, target)
    assert sasha["code"] == "NOT_RAISER"

    received = await raise_event(api, tokens["fiona"], "received", {}, {"runId": run_id})
    assert received["__typename"] == "RaiseEventSuccess", received
    # Both kept scans were delivered, A to the first slot that opened, B to the next.
    assert received["run"]["state"] == "stored"
    found = await lines(
        api, tokens["ada"], run_id, ["event.buffered", "event.delivered", "slot.satisfied"]
    )
    seen = [
        (line["kind"], line["actor"], line["details"].get("slot"), line["details"].get("payload"))
        for line in found
    ]
    assert seen == [
        ("event.buffered", "app", None, {"code": "A"}),
        ("event.buffered", "fiona", None, {"code": "B"}),
        ("slot.satisfied", "fiona", "receive", {}),
        ("event.delivered", "app", None, None),
        ("slot.satisfied", "app", "scan", {"code": "A"}),
        ("event.delivered", "fiona", None, None),
        ("slot.satisfied", "fiona", "rescan", {"code": "B"}),
    ], seen
    # The delivered raise's idempotency key still answers with its first answer: kept.
    replay = await raise_event(api, tokens["app"], "scanned", {"code": "A"}, target, key="scan-a")
    assert replay["__typename"] == "RaiseEventBuffered", replay
    assert replay["duplicate"] is True
    assert replay["event"] == "scanned"


async def test_a_kept_event_expires_and_the_slot_stays_open(
    api: httpx.AsyncClient, tokens: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    run_id = await start_parcel(api, tokens, "P-3")
    kept = await raise_event(api, tokens["app"], "scanned", {"code": "late"}, {"runId": run_id})
    assert kept["__typename"] == "RaiseEventBuffered", kept
    frozen_clock.advance(timedelta(days=1, minutes=1))
    received = await raise_event(api, tokens["fiona"], "received", {}, {"runId": run_id})
    assert received["run"]["state"] == "arrived"
    expired = await lines(api, tokens["ada"], run_id, ["event.expired", "event.delivered"])
    assert [e["kind"] for e in expired] == ["event.expired"]
    assert expired[0]["details"]["event"] == "scanned"
    scan = await w.timeline(api, tokens["ada"], run_id, ["slot.satisfied"])
    assert [s["details"]["slot"] for s in scan] == ["receive"]


async def test_a_slot_opened_by_the_worker_takes_the_kept_event(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    event_services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    run_id = await start_parcel(api, tokens, "P-4")
    kept = await raise_event(api, tokens["app"], "scanned", {"code": "W"}, {"runId": run_id})
    assert kept["__typename"] == "RaiseEventBuffered", kept
    now = frozen_clock.advance(timedelta(hours=5))  # the 4-hour timeout moves the run on
    assert await timers.run_due(event_services, now) >= 1
    query = "query($id: ID!) { run(id: $id) { state } }"
    result = await gql(api, query, {"id": run_id}, token=tokens["ada"])
    assert result.ok()["run"]["state"] == "rescanned"
    satisfied = await lines(api, tokens["ada"], run_id, ["slot.satisfied"])
    assert [(s["details"]["slot"], s["details"]["payload"]) for s in satisfied] == [
        ("scan", {"code": "W"})
    ]
    delivered = await lines(api, tokens["ada"], run_id, ["event.delivered"])
    assert len(delivered) == 1


async def test_events_a_workflow_does_not_buffer_are_still_refused(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    await start_parcel(api, tokens, "P-5")
    early = await raise_event(api, tokens["fiona"], "received", {}, {"correlationKey": "nope"})
    assert early["code"] == "NO_SLOT_WAITING"
    started = await w.start(api, tokens["app"], "expense-approval", "expense", "E-5", w.EXPENSE)
    assert started["__typename"] == "StartRunSuccess"
    paid = await raise_event(api, tokens["app"], "paid", {}, {"runId": started["run"]["id"]})
    assert paid["code"] == "NO_SLOT_WAITING"


async def test_a_run_that_ends_drops_what_it_kept(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run_id = await start_parcel(api, tokens, "P-6")
    kept = await raise_event(api, tokens["app"], "scanned", {"code": "X"}, {"runId": run_id})
    assert kept["__typename"] == "RaiseEventBuffered", kept
    cancel = """mutation($input: CancelRunInput!) { cancelRun(input: $input) {
      __typename ... on RunSuccess { run { status } } } }"""
    variables = {"input": {"runId": run_id, "reason": "parcel lost"}}
    cancelled = await gql(api, cancel, variables, token=tokens["ada"])
    assert cancelled.ok()["cancelRun"]["__typename"] == "RunSuccess"
    dropped = await lines(api, tokens["ada"], run_id, ["event.expired", "event.delivered"])
    assert [(d["kind"], d["reason"]) for d in dropped] == [
        ("event.expired", "scanned dropped: the run ended")
    ]


async def test_the_worker_drops_kept_events_past_their_time(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    event_services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    started = await w.start(api, tokens["app"], "pinged", "ticket", "T-1", {"reference": "T-1"})
    run_id = started["run"]["id"]
    kept = await raise_event(api, tokens["app"], "ping", {}, {"runId": run_id})
    assert kept["__typename"] == "RaiseEventBuffered", kept
    # Before its time a worker round leaves it; after it, the round drops it.
    await timers.run_due(event_services, frozen_clock.advance(timedelta(minutes=50)))
    assert await lines(api, tokens["ada"], run_id, ["event.expired"]) == []
    await timers.run_due(event_services, frozen_clock.advance(timedelta(minutes=20)))
    expired = await lines(api, tokens["ada"], run_id, ["event.expired"])
    assert [(e["kind"], e["details"]["event"]) for e in expired] == [("event.expired", "ping")]
    # The slot that opens later does not get it.
    done = await raise_event(api, tokens["fiona"], "approved", {}, {"runId": run_id})
    assert done["run"]["state"] == "pinging"
    assert await lines(api, tokens["ada"], run_id, ["event.delivered"]) == []
