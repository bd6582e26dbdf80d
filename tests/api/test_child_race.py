"""Parallel saga steps raced to the first finish (docs/composition.md, "Parallel steps"):
``compose-race`` awaits two ``compose-quote`` steps with ``await_first``. The first quoted
wins and the parent moves on; the other is cancelled, or undone when it was quoted in the
same moment; a declined quote raises only once no other can win."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.compose import children as lane
from tests.api import workflows as w
from tests.api.test_children import kinds, settle
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

racing, api, tokens = app_with("racing", Path(__file__).parent / "compose_workflows.py")

RUN = """query($id: ID!) { run(id: $id) {
  state status
  children { label status run { id status state } }
  compensations { step compensation status run { id } }
  timeline(first: 100) { edges { node { kind reason details } } } } }"""
MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename } }"""


async def race(api: httpx.AsyncClient, tokens: dict[str, str], doc: str) -> str:
    attributes = {"title": doc, "first": f"{doc}-a", "second": f"{doc}-b"}
    started = await w.start(api, tokens["app"], "compose-race", "doc", doc, attributes)
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def view(api: httpx.AsyncClient, tokens: dict[str, str], run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(api, RUN, {"id": run_id}, token=tokens["ada"])).ok()["run"]
    return found


async def quote(api: httpx.AsyncClient, tokens: dict[str, str], doc: str) -> None:
    slot = await w.slot_named(api, tokens["fiona"], "quote", doc)
    done = await w.complete(api, tokens["fiona"], slot["id"], {"price": 10})
    assert done["__typename"] == "CompleteSuccess", done


def statuses(found: dict[str, Any]) -> dict[str, str]:
    return {c["label"]: c["run"]["status"] for c in found["children"]}


async def test_the_first_to_finish_wins_and_the_other_is_cancelled(
    api: httpx.AsyncClient, tokens: dict[str, str], racing: container.Services
) -> None:
    run_id = await race(api, tokens, "R-1")
    assert await settle(racing) == 2  # both start together
    await quote(api, tokens, "R-1-b")
    await settle(racing)
    found = await view(api, tokens, run_id)
    assert (found["state"], found["status"]) == ("won", "COMPLETED")
    assert statuses(found) == {"q1": "CANCELLED", "q2": "COMPLETED"}
    assert found["compensations"] == []  # the winner is kept; the loser had done nothing


async def test_runners_up_that_finished_too_are_undone(
    api: httpx.AsyncClient, tokens: dict[str, str], racing: container.Services
) -> None:
    run_id = await race(api, tokens, "R-2")
    await settle(racing)
    await quote(api, tokens, "R-2-a")
    await quote(api, tokens, "R-2-b")  # both quoted before the worker reads either end
    await settle(racing)
    found = await view(api, tokens, run_id)
    assert found["state"] == "won"
    assert statuses(found) == {"q1": "COMPLETED", "q2": "COMPLETED"}
    # q1's end was read first: it won; q2 is undone, once.
    assert [(c["step"], c["compensation"]) for c in found["compensations"]] == [
        ("q2", "compose-note")
    ]
    assert kinds(found).count("run.compensating") == 1


async def test_a_failure_raises_only_once_no_other_can_win(
    api: httpx.AsyncClient, tokens: dict[str, str], racing: container.Services
) -> None:
    run_id = await race(api, tokens, "R-3")
    await settle(racing)
    found = await view(api, tokens, run_id)
    children = {c["label"]: c["run"]["id"] for c in found["children"]}
    decline = {"input": {"runId": children["q1"], "move": "decline"}}
    assert (await gql(api, MOVE, decline, token=tokens["fiona"])).ok()["move"]["__typename"] == (
        "RunSuccess"
    )
    await settle(racing)
    found = await view(api, tokens, run_id)
    assert (found["state"], found["status"]) == ("racing", "ACTIVE")  # q2 may still win
    decline = {"input": {"runId": children["q2"], "move": "decline"}}
    (await gql(api, MOVE, decline, token=tokens["fiona"])).ok()
    await settle(racing)
    found = await view(api, tokens, run_id)
    assert found["state"] == "lost"
    assert "child.caught" in kinds(found)


async def test_a_runner_up_done_after_the_parent_moved_on_is_undone_once(
    api: httpx.AsyncClient, tokens: dict[str, str], racing: container.Services
) -> None:
    run_id = await race(api, tokens, "R-4")
    await settle(racing)
    await quote(api, tokens, "R-4-b")
    # One row: q2's end read, the parent wins and moves on; q1 is to be cancelled...
    assert await lane.run_due(racing, batch=1) == 1
    found = await view(api, tokens, run_id)
    assert found["state"] == "won"
    assert {c["label"]: c["status"] for c in found["children"]}["q1"] == "CANCELLING"
    # ...but is quoted before the worker cancels it: its end wins over the cancel.
    await quote(api, tokens, "R-4-a")
    await settle(racing)
    await settle(racing)  # again: nothing more
    found = await view(api, tokens, run_id)
    assert statuses(found) == {"q1": "COMPLETED", "q2": "COMPLETED"}
    assert [(c["step"], c["compensation"]) for c in found["compensations"]] == [
        ("q1", "compose-note")
    ]
    assert kinds(found).count("run.compensating") == 1
    late = [
        e["node"]["reason"]
        for e in found["timeline"]["edges"]
        if e["node"]["kind"] == "child.ended" and e["node"]["details"]["label"] == "q1"
    ]
    assert late == [
        "child 'q1' ended in quoted (the parent no longer waits for it; "
        "its compensation compose-note starts)"
    ]
