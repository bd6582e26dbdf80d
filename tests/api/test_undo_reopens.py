"""Undo reopens the state's slots as they stood (docs/history.md, "Undo"): a slot that was
still waiting for a sibling waits again (pending, not open to claim), and a slot that had
expired stands expired in the visit the undo returns to, so the state's routes decide the
second time as they did the first."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common.container import Services
from tests.api import workflows as w
from tests.api.test_undo import undo
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

reopen_services, api, tokens = app_with(
    "reopen_services", Path(__file__).parent / "undo_workflows.py"
)

SLOTS = """query($id: ID!) { run(id: $id) { state slots { id name status holder } } }"""


async def run_of(http: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(http, SLOTS, {"id": run_id}, token=token)).ok()["run"]
    return found


def statuses(run: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {s["name"]: (s["status"], s["holder"]) for s in run["slots"]}


async def done_by_fiona(
    http: httpx.AsyncClient, tokens: dict[str, str], slot: str, ref: str
) -> str:
    found = await w.slot_named(http, tokens["fiona"], slot, ref)
    assert (await w.claim(http, tokens["fiona"], found["id"]))["__typename"] == "SlotSuccess"
    completed = await w.complete(http, tokens["fiona"], found["id"], {})
    assert completed["__typename"] == "CompleteSuccess", completed
    state: str = completed["run"]["state"]
    return state


async def test_a_slot_that_waited_for_its_sibling_waits_again(
    reopen_services: Services, api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    started = await w.start(api, tokens["app"], "drafted-order", "order", "D-1", {})
    run_id = started["run"]["id"]
    assert await done_by_fiona(api, tokens, "draft", "D-1") == "sent"

    undone = await undo(api, tokens["fiona"], run_id)
    assert undone["__typename"] == "RunSuccess", undone
    run = await run_of(api, tokens["fiona"], run_id)
    assert run["state"] == "drafting"
    found = statuses(run)
    assert found["draft"] == ("CLAIMED", "fiona")
    assert found["check"] == ("OPEN", None)
    assert found["approve"] == ("PENDING", None)  # not open before the check is done
    approve = next(s for s in run["slots"] if s["name"] == "approve")
    early = await w.claim(api, tokens["frank"], approve["id"])
    assert early["__typename"] != "SlotSuccess", early

    # Once the check is done, the approval opens, as it would have the first time.
    assert await done_by_fiona(api, tokens, "check", "D-1") == "sent"


async def test_a_slot_that_had_expired_stands_expired_and_routes_as_before(
    reopen_services: Services,
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    frozen_clock: clock.FrozenClock,
) -> None:
    started = await w.start(api, tokens["app"], "quoted-order", "order", "Q-1", {})
    run_id = started["run"]["id"]
    frozen_clock.advance(timedelta(hours=1, minutes=1))
    await timers.run_due(reopen_services, frozen_clock.now())
    assert statuses(await run_of(api, tokens["fiona"], run_id))["quote"] == ("EXPIRED", None)
    assert await done_by_fiona(api, tokens, "draft", "Q-1") == "buyer_review"

    undone = await undo(api, tokens["fiona"], run_id)
    assert undone["__typename"] == "RunSuccess", undone
    run = await run_of(api, tokens["fiona"], run_id)
    assert run["state"] == "quoting"
    assert statuses(run) == {"quote": ("EXPIRED", None), "draft": ("CLAIMED", "fiona")}
    # The lapsed quote still counts: the draft's completion routes as it did the first time.
    draft = next(s for s in run["slots"] if s["name"] == "draft")
    again = await w.complete(api, tokens["fiona"], draft["id"], {})
    assert again["run"]["state"] == "buyer_review", again
