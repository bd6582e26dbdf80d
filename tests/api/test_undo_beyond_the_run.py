"""Undo refused once the change reached beyond the run (docs/history.md, "Undo"): after a
child run started, or after an outsider used a signed link, the latest state change stands.
The refusal is typed (NOT_UNDOABLE with its reason) and changes nothing: the run's state,
version and timeline are as they were, apart from the refusal's own line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.service.common.container import Services
from taskflow.service.compose import children as lane
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.test_undo import undo
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

beyond_services, api, tokens = app_with(
    "beyond_services", Path(__file__).parent / "undo_workflows.py"
)

SEEN = """query($id: ID!) { run(id: $id) { state version undoable undoTarget { state }
  slots { name status } children { label } timeline(first: 100) { edges { node { kind } } } } }"""


async def seen(http: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(http, SEEN, {"id": run_id}, token=token)).ok()["run"]
    return found


def kinds(run: dict[str, Any]) -> list[str]:
    return [e["node"]["kind"] for e in run["timeline"]["edges"]]


async def reviewed(http: httpx.AsyncClient, tokens: dict[str, str], workflow: str) -> str:
    """A run of ``workflow`` whose review fiona completed (an undoable completion)."""
    order = {"supplier_email": "orders@supplier.example"}
    started = await w.start(http, tokens["app"], workflow, "order", f"{workflow}-1", order)
    assert started["__typename"] == "StartRunSuccess", started
    review = await w.slot_named(http, tokens["fiona"], "review", f"{workflow}-1")
    assert (await w.claim(http, tokens["fiona"], review["id"]))["__typename"] == "SlotSuccess"
    assert (await w.complete(http, tokens["fiona"], review["id"], {}))["__typename"] == (
        "CompleteSuccess"
    )
    run_id: str = started["run"]["id"]
    return run_id


async def refused_and_unchanged(
    http: httpx.AsyncClient, token: str, run_id: str, reason: str
) -> None:
    before = await seen(http, token, run_id)
    assert before["undoable"] is False, before
    assert before["undoTarget"] is None, before
    answer = await undo(http, token, run_id)
    assert answer["__typename"] == "NotUndoable", answer
    assert answer["code"] == "NOT_UNDOABLE", answer
    assert answer["reason"] == reason, answer
    assert "reached beyond the run" in answer["message"]
    after = await seen(http, token, run_id)
    assert (after["state"], after["version"], after["slots"]) == (
        before["state"],
        before["version"],
        before["slots"],
    )
    # Only the refusal itself was written: nothing was rewound, no slot reopened.
    added = kinds(after)[len(kinds(before)) :]
    assert "state.entered" not in added, added
    assert "slot.reopened" not in added, added


async def test_a_review_that_started_a_child_run_stands(
    beyond_services: Services, api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run_id = await reviewed(api, tokens, "checked-order")
    # Before the worker starts the note, the review may still be taken back.
    assert (await seen(api, tokens["fiona"], run_id))["undoTarget"] == {"state": "review"}
    while await lane.run_due(beyond_services):
        pass
    run = await seen(api, tokens["fiona"], run_id)
    assert run["state"] == "checking"
    assert [c["label"] for c in run["children"]] == ["note"]
    assert "child.started" in kinds(run)
    await refused_and_unchanged(api, tokens["fiona"], run_id, "child.started")


async def test_a_review_after_which_an_outsider_used_a_link_stands(
    beyond_services: Services, api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run_id = await reviewed(api, tokens, "collected-order")
    confirmation = await w.slot_named(api, tokens["fiona"], "confirmation", "collected-order-1")
    claimed = await w.claim(api, tokens["fiona"], confirmation["id"])
    assert claimed["__typename"] == "SlotSuccess"
    link = await m.mint(api, tokens["fiona"], confirmation["id"], email="orders@supplier.example")
    assert link["__typename"] == "MintMagicLinkSuccess", link
    # Minting alone reaches no one yet: the review may still be undone.
    assert (await seen(api, tokens["fiona"], run_id))["undoTarget"] == {"state": "review"}
    used = await gql(api, m.COMPLETE_WITH_LINK, {"input": {"token": link["token"], "payload": {}}})
    assert used.ok()["completeWithLink"]["__typename"] == "CompleteWithLinkSuccess", used.body
    run = await seen(api, tokens["fiona"], run_id)
    assert run["state"] == "collecting"
    assert "link.used" in kinds(run)
    await refused_and_unchanged(api, tokens["fiona"], run_id, "link.used")
