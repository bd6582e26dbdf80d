"""Every operation in graphql/operations/ for the work API, run as a frontend would run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"


async def op(client: httpx.AsyncClient, name: str, token: str, **variables: Any) -> dict[str, Any]:
    result = await gql(client, (OPERATIONS / f"{name}.graphql").read_text(), variables, token=token)
    return result.ok()


async def test_the_work_operations_tell_the_story_of_an_expense(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    assert (await op(client, "me", people["fiona"]))["me"]["login"] == "fiona"
    started = await op(
        client,
        "start_run",
        people["app"],
        input={
            "workflow": "expense-approval",
            "subject": {
                "type": "expense",
                "externalId": "EXP-9",
                "attributes": {**w.EXPENSE, "reference": "EXP-9"},
            },
            "idempotencyKey": "exp-9",
        },
    )
    run_id = started["startRun"]["run"]["id"]

    page = await op(client, "inbox_page", people["fiona"], first=10)
    (row,) = [e["node"] for e in page["inbox"]["edges"]]
    assert row["fields"][0]["name"] == "decision"
    claimed = await op(
        client, "claim", people["fiona"], slotId=row["id"], expectedVersion=row["version"]
    )
    assert claimed["claim"]["slot"]["holder"] == "fiona"
    stale = await op(
        client, "claim", people["frank"], slotId=row["id"], expectedVersion=row["version"]
    )
    assert stale["claim"]["__typename"] == "StaleVersion"
    released = await op(client, "release", people["fiona"], slotId=row["id"], reason="on leave")
    assert released["release"]["slot"]["status"] == "OPEN"
    nxt = await op(client, "claim_next", people["frank"], filter={"workflow": "expense-approval"})
    assert nxt["claimNext"]["slot"]["holder"] == "frank"
    handed = await op(
        client, "assign", people["leah"], slotId=row["id"], to="fiona", reason="Frank is out"
    )
    assert handed["assign"]["slot"]["holder"] == "fiona"
    refused = await op(client, "assign", people["frank"], slotId=row["id"], to="frank")
    assert refused["assign"]["code"] == "NOT_DELEGATE"
    assert (await op(client, "slot", people["fiona"], id=row["id"]))["slot"]["run"][
        "state"
    ] == "submitted"

    queue = await op(client, "work_queue", people["fiona"], audience=["role:finance"])
    assert [n["node"]["holder"] for n in queue["work"]["edges"]] == ["fiona"]
    board = await op(client, "board", people["leah"], workflow="expense-approval")
    (card,) = [e["node"] for e in board["board"]["edges"]]
    assert card["lane"] == "submitted"
    assert card["moves"][0]["name"] == "withdraw"
    assert card["moves"][0]["allowed"] is False  # only the submitter may withdraw

    updated = await op(
        client,
        "update_subject",
        people["app"],
        type="expense",
        externalId="EXP-9",
        attributes={**w.EXPENSE, "reference": "EXP-9", "amount": 99},
    )
    assert updated["updateSubject"]["subject"]["attributes"]["amount"] == 99
    completion = {"slotId": row["id"], "payload": {"decision": "approve"}, "idempotencyKey": "c9"}
    done = await op(client, "complete", people["fiona"], **completion)
    assert done["complete"]["run"]["state"] == "payment"  # 99 needs no manager any more
    # The answer got lost? The same request with the same key answers the same.
    assert (await op(client, "complete", people["fiona"], **completion)) == done
    moved = await op(
        client, "move", people["leah"], runId=run_id, move="stop_payment", input={"reason": "dup"}
    )
    assert moved["move"]["run"]["state"] == "rejected"
    cancel = await op(client, "cancel_run", people["leah"], runId=run_id, reason="already ended")
    assert cancel["cancelRun"]["code"] == "RUN_NOT_ACTIVE"

    story = await op(client, "run_timeline", people["leah"], id=run_id)
    kinds = [e["node"]["kind"] for e in story["run"]["timeline"]["edges"]]
    for kind in (
        "slot.claimed",
        "slot.released",
        "slot.assigned",
        "subject.updated",
        "run.moved",
        "refused",
    ):
        assert kind in kinds
    assert story["run"]["slots"][0]["satisfiedBy"] == "fiona"


async def test_raise_event_operation(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    ticket = {
        "reference": "T-5",
        "title": "Login loop",
        "priority": "P3",
        "team": "billing-support",
        "customer_email": "a@example.com",
    }
    # The back-office app's own ticket: an integration raises events on the runs it started.
    await w.start(client, people["app"], "support-ticket", "ticket", "T-5", ticket)
    raised = await op(
        client,
        "raise_event",
        people["app"],  # the help desk's grant names only customer-replied
        event="triaged",
        payload={"priority": "P3", "category": "question"},
        correlationKey="T-5",
        key="triage-5",
    )
    assert raised["raiseEvent"]["run"]["state"] == "open"


async def test_work_is_for_leads_and_team_members(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-10")
    everything = "query { work(first: 10) { totalCount edges { node { label } } } }"
    assert (await gql(client, everything, token=people["leah"])).ok()["work"]["totalCount"] == 1
    refused = await gql(client, everything, token=people["fiona"])
    assert refused.error_codes == ["FORBIDDEN"]
    other_team = await gql(
        client,
        'query { work(filter: {audience: ["role:legal"]}) { totalCount } }',
        token=people["fiona"],
    )
    assert other_team.error_codes == ["FORBIDDEN"]


async def test_runs_and_slots_of_others_answer_as_not_found(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start_expense(client, people["app"], "EXP-11")
    run_id = started["run"]["id"]
    slot_id = (await w.slot_named(client, people["fiona"], "finance_review"))["id"]
    for token in (people["sasha"], people["lee"]):
        assert (await op(client, "run_timeline", token, id=run_id))["run"] is None
        assert (await op(client, "slot", token, id=slot_id))["slot"] is None
        claim = await op(client, "claim", token, slotId=slot_id)
        assert claim["claim"]["__typename"] == "NotFoundRefusal"
    node = "query($id: ID!) { node(id: $id) { id ... on Run { state } } }"
    assert (await gql(client, node, {"id": run_id}, token=people["sasha"])).ok()["node"] is None
    assert (await gql(client, node, {"id": run_id}, token=people["fiona"])).ok()["node"][
        "state"
    ] == "submitted"
