"""Subscriptions over graphql-transport-ws: each principal's stream holds what their powers
let them see at the moment of the change, and nothing else (docs/live.md)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from taskflow.service.common import container
from tests.api import live as lv
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename } }"""
OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"
#: The subscription documents a frontend uses (graphql/operations/).
DOCUMENTS = {p.stem: p.read_text() for p in OPERATIONS.glob("*_changed.graphql")}
BOARD = """subscription($lane: String) { boardChanged(workflow: "expense-approval", lane: $lane) {
  cursor runId card { lane subject { externalId } } } }"""


def _change(message: dict[str, object], field: str = "inboxChanged") -> dict[str, object]:
    assert message["type"] == "next", message
    change: dict[str, object] = message["payload"]["data"][field]  # type: ignore[index]
    return change


async def test_a_claim_leaves_the_other_candidates_inbox_within_a_second(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    await w.start_expense(client, people["app"], "EXP-LIVE-1")
    slot = await w.slot_named(client, people["fiona"], "finance_review", "EXP-LIVE-1")
    async with (
        lv.connect(client, people["fiona"]) as fiona,
        lv.connect(client, people["frank"]) as frank,
    ):
        await fiona.subscribe("1", lv.INBOX)
        await frank.subscribe("1", lv.INBOX)
        await lv.subscribed(services, 2)
        await w.claim(client, people["fiona"], slot["id"])
        gone = _change(await frank.next(within=1.0))
        assert gone == {"cursor": gone["cursor"], "slotId": slot["id"], "slot": None}
        held = _change(await fiona.next(within=1.0))
        assert held["slotId"] == slot["id"]
        assert held["slot"]["status"] == "CLAIMED"  # type: ignore[index]
        assert held["slot"]["holder"] == "fiona"  # type: ignore[index]


async def test_a_slot_that_leaves_my_candidates_leaves_my_stream(
    services: container.Services, people: dict[str, str]
) -> None:
    async with lv.app_client(services, recheck_interval=0.1) as client:
        await w.start_expense(client, people["app"], "EXP-LIVE-2")
        slot = await w.slot_named(client, people["frank"], "finance_review", "EXP-LIVE-2")
        async with lv.connect(client, people["frank"]) as frank:
            await frank.subscribe("1", lv.INBOX)
            await lv.subscribed(client.services, 1)  # type: ignore[attr-defined]
            # An admin takes the finance role from frank: the slot is no longer his to take.
            changed = await gql(
                client,
                UPSERT,
                {"input": {"login": "frank", "displayName": "Frank", "roles": ["employee"]}},
                token=people["ada"],
            )
            assert changed.ok()["upsertPrincipal"]["__typename"] == "UpsertPrincipalSuccess"
            gone = _change(await frank.next(within=1.0))
            assert gone["slotId"] == slot["id"]
            assert gone["slot"] is None


async def test_nothing_crosses_workflows_or_teams(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    async with (
        lv.connect(client, people["tess"]) as tess,
        lv.connect(client, people["fiona"]) as fiona,
    ):
        await tess.subscribe("inbox", lv.INBOX)
        await tess.subscribe("board", BOARD)
        await fiona.subscribe("inbox", lv.INBOX)
        await lv.subscribed(services, 3)
        await w.start_expense(client, people["app"], "EXP-LIVE-3")
        opened = _change(await fiona.next(within=1.0))
        assert opened["slot"]["subject"] == {"externalId": "EXP-LIVE-3"}  # type: ignore[index]
        slot = await w.slot_named(client, people["fiona"], "finance_review", "EXP-LIVE-3")
        await w.claim(client, people["fiona"], slot["id"])
        assert _change(await fiona.next(within=1.0))["slot"] is not None
        # tess (support triage) is no candidate, reads no expense board: she hears nothing,
        # not even that something changed.
        assert await tess.quiet(0.5) == []


async def test_the_work_list_is_for_those_who_may_read_it(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    query = "subscription { workChanged(filter: {}) { cursor slotId } }"
    async with lv.connect(client, people["fiona"]) as fiona:
        await fiona.subscribe("w", query)
        refused = await fiona.next()
        assert refused["type"] == "error", refused
        assert refused["payload"][0]["extensions"]["code"] == "FORBIDDEN"


async def test_a_lane_subscription_tells_a_card_that_leaves_the_lane(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    await w.start_expense(client, people["app"], "EXP-LIVE-4")
    slot = await w.slot_named(client, people["fiona"], "finance_review", "EXP-LIVE-4")
    async with lv.connect(client, people["leah"]) as leah:
        await leah.subscribe("b", BOARD, {"lane": "submitted"})
        await lv.subscribed(services, 1)
        await w.claim(client, people["fiona"], slot["id"])
        still = _change(await leah.next(), "boardChanged")
        assert still["card"] == {"lane": "submitted", "subject": {"externalId": "EXP-LIVE-4"}}
        done = await w.complete(client, people["fiona"], slot["id"], {"decision": "approve"})
        assert done["__typename"] == "CompleteSuccess", done
        # The run moved on to the next state: the card leaves the lane (a claim's other
        # lines may come first, each the card as it stood).
        told = [_change(m, "boardChanged") for m in await leah.quiet(1.0)]
        assert told
        assert {c["runId"] for c in told} == {still["runId"]}
        assert told[-1]["card"] is None


async def test_the_subscription_documents_follow_a_slot_and_its_run(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services
) -> None:
    started = await w.start_expense(client, people["app"], "EXP-LIVE-5")
    run_id = started["run"]["id"]
    slot = await w.slot_named(client, people["fiona"], "finance_review", "EXP-LIVE-5")
    async with lv.connect(client, people["fiona"]) as fiona:
        await fiona.subscribe("s", DOCUMENTS["slot_changed"], {"id": slot["id"]})
        await fiona.subscribe("r", DOCUMENTS["run_changed"], {"id": run_id})
        await lv.subscribed(services, 2)
        await w.claim(client, people["fiona"], slot["id"])
        told = {m["id"]: m for m in await fiona.quiet(1.0)}
    assert _change(told["s"], "slotChanged")["slot"]["holder"] == "fiona"  # type: ignore[index]
    run = _change(told["r"], "runChanged")["run"]
    assert run["id"] == run_id  # type: ignore[index]
    assert {"name": "finance_review", "status": "CLAIMED", "holder": "fiona"}.items() <= (
        run["slots"][0].items()  # type: ignore[index]
    )
