"""move and cancelRun picked on a stale view (a board card, a run page) are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"

RUN = """query($id: ID!) { run(id: $id) { state status version moves { name allowed } } }"""


async def op(client: httpx.AsyncClient, name: str, token: str, **variables: Any) -> dict[str, Any]:
    result = await gql(client, (OPERATIONS / f"{name}.graphql").read_text(), variables, token=token)
    return result.ok()


async def _run(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    run: dict[str, Any] = (await gql(client, RUN, {"id": run_id}, token=token)).ok()["run"]
    return run


async def _expense_reviewed_meanwhile(
    client: httpx.AsyncClient, people: dict[str, str]
) -> tuple[str, dict[str, Any]]:
    """A claim over 1000 as the board showed it; then finance approves it (-> manager)."""
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-2026-0042", w.EXPENSE
    )
    run_id = started["run"]["id"]
    board = await op(client, "board", people["leah"], workflow="expense-approval")
    (card,) = [e["node"] for e in board["board"]["edges"]]
    assert card["lane"] == "submitted"
    assert [m["name"] for m in card["moves"]] == ["withdraw"]

    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"])
    done = await w.complete(client, people["fiona"], review["id"], {"decision": "approve"})
    assert done["run"]["state"] == "manager_approval"
    return run_id, card


async def test_a_move_picked_on_a_stale_card_is_refused_naming_the_state_now(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id, card = await _expense_reviewed_meanwhile(client, people)
    seen = card["run"]["version"]
    now = await _run(client, people["sam"], run_id)
    # The new state has a move of the same name: without the guard it would run there.
    assert "withdraw" in [m["name"] for m in now["moves"]]
    assert now["version"] > seen

    stale = await op(
        client, "move", people["sam"], runId=run_id, move="withdraw", expectedVersion=seen
    )
    refused = stale["move"]
    assert refused["__typename"] == "StaleVersion"
    assert refused["code"] == "STALE_VERSION"
    assert refused["currentState"] == "manager_approval"
    assert refused["currentVersion"] == now["version"]
    assert "manager_approval" in refused["message"]
    after = await _run(client, people["sam"], run_id)
    assert (after["state"], after["version"]) == ("manager_approval", now["version"])

    fresh = await op(
        client, "move", people["sam"], runId=run_id, move="withdraw", expectedVersion=now["version"]
    )
    assert fresh["move"]["__typename"] == "RunSuccess"
    assert fresh["move"]["run"]["state"] == "withdrawn"
    assert fresh["move"]["run"]["version"] > now["version"]


async def test_cancel_run_picked_on_a_stale_view_is_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id, card = await _expense_reviewed_meanwhile(client, people)
    stale = await op(
        client,
        "cancel_run",
        people["leah"],
        runId=run_id,
        reason="duplicate claim",
        expectedVersion=card["run"]["version"],
    )
    assert stale["cancelRun"]["__typename"] == "StaleVersion"
    assert stale["cancelRun"]["currentState"] == "manager_approval"
    assert (await _run(client, people["leah"], run_id))["status"] == "ACTIVE"

    version = (await _run(client, people["leah"], run_id))["version"]
    done = await op(
        client,
        "cancel_run",
        people["leah"],
        runId=run_id,
        reason="duplicate claim",
        expectedVersion=version,
    )
    assert done["cancelRun"]["run"]["status"] == "CANCELLED"


RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename
  ... on Refusal { code message } ... on StaleVersion { currentVersion }
  ... on RaiseEventSuccess { run { state version } } } }"""


async def test_a_raise_on_a_run_picked_on_a_stale_view_is_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start_expense(client, people["app"], "EXP-2026-0042")
    run_id = started["run"]["id"]
    version = (await _run(client, people["fiona"], run_id))["version"]
    review = {"event": "reviewed", "payload": {"decision": "approve"}}

    async def raise_with(target: dict[str, Any], expected: int) -> dict[str, Any]:
        variables = {"input": {**review, "target": target, "expectedVersion": expected}}
        found = await gql(client, RAISE, variables, token=people["fiona"])
        return dict(found.ok()["raiseEvent"])

    stale = await raise_with({"runId": run_id}, version - 1)
    unguarded = await raise_with({"correlationKey": "EXP-2026-0042"}, version)
    assert (stale["code"], stale["currentVersion"]) == ("STALE_VERSION", version)
    assert unguarded["code"] == "INVALID_INPUT"
    assert (await _run(client, people["fiona"], run_id))["state"] == "submitted"
    done = await raise_with({"runId": run_id}, version)
    assert done["run"]["state"] == "manager_approval"
