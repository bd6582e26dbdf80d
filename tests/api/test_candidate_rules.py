"""A slot's whole candidate rule (keys, deny keys, residual rules) decides every list and claim.

Regressions of issue 15 ("the team queue and the board show slots to people their
candidate rule excludes", "separation of duties breaks on escalation") and issue 16
("claimNext never offers a slot whose rule has a residual part", "inbox.totalCount
is null"), all through GraphQL over HTTP.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import workflows as w
from tests.conftest import example_people, gql, services_fixture

pytestmark = pytest.mark.anyio

WORKFLOWS = Path(__file__).resolve().parent / "candidate_workflows.py"

#: A second finance lead, not in finance: only an escalation makes her a candidate.
EXTRA_PEOPLE = [{"id": "lena", "display_name": "Lena Finance-Lead", "roles": ["finance-lead"]}]

WORK = """query($audience: [String!]) { work(first: 50, filter: {audience: $audience}) {
  totalCount edges { node { id name workflow } } } }"""

BOARD = """query($workflow: String!) { board(workflow: $workflow, first: 50) {
  totalCount edges { node { run { id } slots { id name } } } } }"""

INBOX_PAGE = """query($first: Int, $after: String) { inbox(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } edges { node { id name } } } }"""

CLAIM_NEXT = """mutation($filter: InboxFilter) { claimNext(input: {filter: $filter}) {
  __typename ... on SlotSuccess { slot { id name holder } } ... on Refusal { code message } } }"""

ASSIGN = """mutation($input: AssignInput!) { assign(input: $input) { __typename
  ... on SlotSuccess { slot { holder } } ... on Refusal { code message } } }"""


services = services_fixture("services", WORKFLOWS, doc="The examples plus this module's workflows.")


@pytest.fixture
async def staff(services: container.Services, people: dict[str, str]) -> dict[str, str]:
    """The example people and ``EXTRA_PEOPLE``: a bearer token per principal id."""
    # ``people`` loaded the examples again: the app gets its every-workflow grant back.
    app = [p for p in example_people(app_everywhere=True) if p["id"] == "app"]
    await principal_service.load(services, [*EXTRA_PEOPLE, *app])
    now = services.clock.now()
    return {**people, **{p["id"]: services.staff_tokens.mint(p["id"], now) for p in EXTRA_PEOPLE}}


async def work_ids(client: httpx.AsyncClient, token: str, audience: list[str]) -> tuple[int, set]:
    data = (await gql(client, WORK, {"audience": audience}, token=token)).ok()["work"]
    return data["totalCount"], {e["node"]["id"] for e in data["edges"]}


async def board_runs(client: httpx.AsyncClient, token: str, workflow: str) -> tuple[int, set]:
    data = (await gql(client, BOARD, {"workflow": workflow}, token=token)).ok()["board"]
    return data["totalCount"], {e["node"]["run"]["id"] for e in data["edges"]}


async def claim_next(client: httpx.AsyncClient, token: str, **f: Any) -> dict[str, Any]:
    result = await gql(client, CLAIM_NEXT, {"filter": f or None}, token=token)
    return result.ok()["claimNext"]


async def test_team_queue_and_board_leave_out_whom_the_residual_rule_excludes(
    client: httpx.AsyncClient, staff: dict[str, str]
) -> None:
    run = (
        await w.start(client, staff["app"], "regional-approval", "request", "R-1", {"region": "eu"})
    )["run"]
    region = ["attr:region=eu"]

    # Sasha is in the EU but not a manager: the slot carries her key, the rule excludes her.
    assert await work_ids(client, staff["sasha"], region) == (0, set())
    assert await board_runs(client, staff["sasha"], "regional-approval") == (0, set())
    assert await w.inbox(client, staff["sasha"]) == []
    assert (await claim_next(client, staff["sasha"]))["__typename"] == "NothingToClaim"

    # A manager is a lead and reads all work; the rule admits her to the slot too.
    total, ids = await work_ids(client, staff["max"], region)
    assert (total, len(ids)) == (1, 1)
    assert (await board_runs(client, staff["max"], "regional-approval"))[1] == {run["id"]}


async def test_team_queue_and_board_show_a_role_and_group_slot_to_whoever_has_both(
    client: httpx.AsyncClient, staff: dict[str, str]
) -> None:
    run = (await w.start(client, staff["app"], "paired-check", "check", "C-1", {"n": 1}))["run"]
    team = ["group:finance-uk"]

    # Paul is in the group but not in finance: his team's queue and the board leave it out.
    assert await work_ids(client, staff["paul"], team) == (0, set())
    assert await board_runs(client, staff["paul"], "paired-check") == (0, set())

    # Fiona (finance, in the group, not a lead) sees it in the same queue and on the board.
    total, ids = await work_ids(client, staff["fiona"], team)
    assert (total, len(ids)) == (1, 1)
    assert await board_runs(client, staff["fiona"], "paired-check") == (1, {run["id"]})
    [slot] = await w.inbox(client, staff["fiona"])
    assert slot["id"] in ids


async def test_claim_next_offers_a_role_and_group_slot_to_whoever_has_both(
    client: httpx.AsyncClient, staff: dict[str, str]
) -> None:
    await w.start(client, staff["app"], "paired-check", "check", "C-1", {"n": 1})

    # Sam has the role only, Paul the group only: nothing for either.
    assert (await claim_next(client, staff["sam"]))["__typename"] == "NothingToClaim"
    assert (await claim_next(client, staff["paul"]))["__typename"] == "NothingToClaim"

    # Fiona has both: claim-next offers (and gives) it to her.
    taken = await claim_next(client, staff["fiona"], workflow="paired-check")
    assert taken["__typename"] == "SlotSuccess", taken
    assert (taken["slot"]["name"], taken["slot"]["holder"]) == ("check", "fiona")


async def test_inbox_total_count_is_exact_across_pages(
    client: httpx.AsyncClient, staff: dict[str, str]
) -> None:
    for n in range(3):
        await w.start(client, staff["app"], "paired-check", "check", f"C-{n}", {"n": n})
    await w.start(client, staff["app"], "regional-approval", "request", "R-1", {"region": "eu"})

    first, rest = await w.two_pages(client, INBOX_PAGE, "inbox", staff["fiona"], 2)
    assert first["totalCount"] == 3
    assert first["pageInfo"]["hasNextPage"] is True
    assert rest["totalCount"] == 3
    assert len(first["edges"]) + len(rest["edges"]) == 3
    assert rest["pageInfo"]["hasNextPage"] is False

    # Asked for through a fragment, it is counted too; not asked for, it costs nothing.
    fragment = """query { inbox(first: 1) { ...Counted } }
      fragment Counted on SlotConnection { totalCount }"""
    counted = (await gql(client, fragment, token=staff["fiona"])).ok()["inbox"]
    assert counted == {"totalCount": 3}

    # Sam and Sasha carry keys of these slots (role:finance, attr:region=eu) but their
    # rules exclude them: nothing listed, nothing counted.
    for person in ("sam", "sasha"):
        page = (await gql(client, INBOX_PAGE, {"first": 10}, token=staff[person])).ok()["inbox"]
        assert (page["totalCount"], page["edges"]) == (0, [])


async def test_an_escalation_keeps_the_submitter_out(
    client: httpx.AsyncClient,
    staff: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    # Leah, a finance lead, submits an expense of her own.
    expense = {**w.EXPENSE, "reference": "EXP-LEAH-1", "submitted_by": "leah"}
    started = await w.start(
        client, staff["app"], "expense-approval", "expense", "EXP-LEAH-1", expense
    )
    run_id = started["run"]["id"]
    review = await w.slot_named(client, staff["fiona"], "finance_review")

    # Nobody picks it up within four business hours (from 09:00): the escalation adds the
    # finance leads.
    frozen_clock.set(datetime(2026, 12, 1, 13, 1, tzinfo=UTC))
    assert await timers.run_due(services, frozen_clock.now()) >= 1
    kinds = [e["kind"] for e in await w.timeline(client, staff["ada"], run_id)]
    assert "slot.escalated" in kinds

    # Leah still may not see, claim, hand to herself or complete her own claim.
    assert [s for s in await w.inbox(client, staff["leah"]) if s["id"] == review["id"]] == []
    assert (await claim_next(client, staff["leah"], workflow="expense-approval"))[
        "__typename"
    ] == "NothingToClaim"
    refused = await w.claim(client, staff["leah"], review["id"])
    assert refused["__typename"] == "NotCandidate", refused
    assigned = (
        await gql(
            client, ASSIGN, {"input": {"slotId": review["id"], "to": "leah"}}, token=staff["leah"]
        )
    ).ok()["assign"]
    assert assigned["__typename"] == "NotCandidate", assigned
    done = await w.complete(client, staff["leah"], review["id"], {"decision": "approve"})
    assert done["__typename"] != "CompleteSuccess", done

    # Lena, another finance lead (not in finance), was brought in by the escalation.
    [mine] = [s for s in await w.inbox(client, staff["lena"]) if s["id"] == review["id"]]
    assert (await w.claim(client, staff["lena"], mine["id"]))["__typename"] == "SlotSuccess"
    done = await w.complete(client, staff["lena"], review["id"], {"decision": "approve"})
    assert done["__typename"] == "CompleteSuccess", done
