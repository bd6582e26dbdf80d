"""Automatic starts and owned subjects, and who acted (``ctx.actor``), over HTTP.

Support tickets are owned by ``support-ticket`` (``owns = Owns(field="status")``): a new
ticket sent with ``upsertSubject`` starts its run, once however often (or however
concurrently) it is sent, and the ticket reads the run's state as ``status``, which
``updateSubject`` refuses to write. ``start_workflows.py`` routes on ``actor``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
start_services, api, tokens = app_with("start_services", HERE / "start_workflows.py")

UPSERT = """mutation($input: UpsertSubjectInput!) { upsertSubject(input: $input) { __typename
  ... on UpsertSubjectSuccess { subject { externalId attributes }
        runs { id workflow state } started { id workflow state } }
  ... on OwnedField { field workflow }
  ... on Refusal { code message } } }"""
UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on UpdateSubjectSuccess { subject { attributes } runs { id state } }
  ... on OwnedField { field workflow }
  ... on Refusal { code message } } }"""
RUNS = """query($filter: RunFilter) { runs(first: 50, filter: $filter) { totalCount
  edges { node { id workflow state subject { externalId attributes } } } } }"""
RUN = """query($id: ID!) { run(id: $id) { state status subject { attributes } } }"""


async def _upsert(
    client: httpx.AsyncClient, token: str, external_id: str, **attributes: Any
) -> dict[str, Any]:
    variables = {
        "input": {
            "type": "ticket",
            "externalId": external_id,
            "attributes": {**w.TICKET, "reference": external_id, **attributes},
        }
    }
    answer: dict[str, Any] = (await gql(client, UPSERT, variables, token=token)).ok()[
        "upsertSubject"
    ]
    return answer


async def _ticket_runs(client: httpx.AsyncClient, token: str, external_id: str) -> list[Any]:
    wanted = {
        "workflow": "support-ticket",
        "subject": {"type": "ticket", "externalId": external_id},
    }
    found = await gql(client, RUNS, {"filter": wanted}, token=token)
    return [e["node"] for e in found.ok()["runs"]["edges"]]


async def test_a_new_ticket_starts_its_run_and_shows_the_runs_state_as_its_status(
    world: World,
) -> None:
    client, helpdesk = world.client, world.people["helpdesk"]
    first = await _upsert(client, helpdesk, "T-1")
    assert first["__typename"] == "UpsertSubjectSuccess"
    started = first["started"]
    assert started["workflow"] == "support-ticket"
    assert first["subject"]["attributes"]["status"] == started["state"] == "new"
    assert [r["id"] for r in first["runs"]] == [started["id"]]
    run = (await gql(client, RUN, {"id": started["id"]}, token=helpdesk)).ok()["run"]
    assert run["subject"]["attributes"]["status"] == "new"
    # The triage slot reads the ticket's status from its run too.
    triage = await w.slot_named(client, world.people["tess"], "triage", "T-1")
    assert triage["subject"]["attributes"]["status"] == "new"

    again = await _upsert(client, helpdesk, "T-1", title="Cannot export invoices (urgent)")
    assert again["started"] is None
    assert [r["id"] for r in again["runs"]] == [started["id"]]
    assert again["subject"]["attributes"]["title"].endswith("(urgent)")
    assert again["subject"]["attributes"]["status"] == "new"
    assert len(await _ticket_runs(client, helpdesk, "T-1")) == 1


async def test_racing_upserts_of_one_new_ticket_make_one_run(world: World) -> None:
    client, helpdesk = world.client, world.people["helpdesk"]
    answers = await asyncio.gather(*(_upsert(client, helpdesk, "T-RACE") for _ in range(8)))
    assert {a["__typename"] for a in answers} == {"UpsertSubjectSuccess"}
    started = [a["started"]["id"] for a in answers if a["started"] is not None]
    assert len(started) == 1
    assert {r["id"] for a in answers for r in a["runs"]} == set(started)
    assert [r["id"] for r in await _ticket_runs(client, helpdesk, "T-RACE")] == started


async def test_an_upsert_racing_a_start_run_of_the_owner_makes_one_run(world: World) -> None:
    client, helpdesk = world.client, world.people["helpdesk"]
    attributes = {**w.TICKET, "reference": "T-BOTH"}
    upserted, begun = await asyncio.gather(
        _upsert(client, helpdesk, "T-BOTH"),
        w.start(client, helpdesk, "support-ticket", "ticket", "T-BOTH", attributes),
    )
    assert upserted["__typename"] == "UpsertSubjectSuccess"
    runs = await _ticket_runs(client, helpdesk, "T-BOTH")
    assert len(runs) == 1
    if begun["__typename"] == "RunExists":  # the upsert's run came first
        assert upserted["started"]["id"] == runs[0]["id"]
    else:
        assert begun["run"]["id"] == runs[0]["id"]
        assert upserted["started"] is None


async def test_the_owned_status_is_read_only(world: World) -> None:
    client, helpdesk = world.client, world.people["helpdesk"]
    started = (await _upsert(client, helpdesk, "T-2"))["started"]
    attributes = {**w.TICKET, "reference": "T-2", "status": "resolved"}
    refused = (
        await gql(
            client,
            UPDATE,
            {"input": {"type": "ticket", "externalId": "T-2", "attributes": attributes}},
            token=helpdesk,
        )
    ).ok()["updateSubject"]
    assert refused["__typename"] == "OwnedField"
    assert refused["code"] == "OWNED_FIELD"
    assert (refused["field"], refused["workflow"]) == ("status", "support-ticket")
    assert "status" in refused["message"]
    assert "support-ticket" in refused["message"]
    also = await _upsert(client, helpdesk, "T-2", status="resolved")
    assert (also["__typename"], also["field"]) == ("OwnedField", "status")
    # Nothing changed: the run is where it was, the ticket has no stored status.
    run = (await gql(client, RUN, {"id": started["id"]}, token=helpdesk)).ok()["run"]
    assert run["state"] == "new"
    assert run["subject"]["attributes"]["status"] == "new"
    assert "resolved" not in str(run["subject"]["attributes"])


async def test_upsert_needs_a_grant_on_the_owner(world: World) -> None:
    refused = await _upsert(world.client, world.people["app"], "T-3")
    assert refused["__typename"] == "UpsertSubjectSuccess"  # app is granted support-ticket
    sam = await _upsert(world.client, world.people["sam"], "T-4")
    assert sam["__typename"] == "NotAllowed"
    assert await _ticket_runs(world.client, world.people["helpdesk"], "T-4") == []


# -- who acted ---------------------------------------------------------------------------------

REQUEST = {"requested_by": "sam", "title": "New laptop"}


async def _approve(client: httpx.AsyncClient, people: dict[str, str], who: str, ref: str) -> str:
    begun = await w.start(client, people["app"], "four-eyes", "request", ref, REQUEST)
    slot = await w.slot_named(client, people[who], "approve", ref)
    await w.claim(client, people[who], slot["id"])
    done = await w.complete(client, people[who], slot["id"], {})
    assert done["__typename"] == "CompleteSuccess", done
    run_id: str = begun["run"]["id"]
    return run_id


async def test_routes_and_hooks_read_who_acted(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    self_approved = await _approve(api, tokens, "sam", "R-1")  # the requester approves
    by_finance = await _approve(api, tokens, "fiona", "R-2")  # finance: the hook audits it
    by_support = await _approve(api, tokens, "sasha", "R-3")
    states = {}
    for run_id in (self_approved, by_finance, by_support):
        states[run_id] = (await gql(api, RUN, {"id": run_id}, token=tokens["app"])).ok()["run"]
    assert states[self_approved]["state"] == "self_approved"
    assert states[by_finance]["state"] == "audited"
    assert states[by_support]["state"] == "approved"
    # The timeline records the same actor the route read.
    lines = (
        await gql(
            api, w.TIMELINE, {"id": by_finance, "kinds": ["state.entered"]}, token=tokens["app"]
        )
    ).ok()["run"]["timeline"]["edges"]
    assert {e["node"]["actor"] for e in lines} >= {"fiona"}


async def test_a_timeout_is_read_as_the_timer(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    start_services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    begun = await w.start(api, tokens["app"], "auto-close", "nudge", "N-1", {"x": 1})
    frozen_clock.advance(timedelta(hours=2))
    assert await timers.run_due(start_services, frozen_clock.now()) > 0
    run = (await gql(api, RUN, {"id": begun["run"]["id"]}, token=tokens["app"])).ok()["run"]
    assert run["state"] == "closed_by_timer"


async def test_the_demo_sends_its_tickets_and_their_workflow_starts_on_them(
    client: httpx.AsyncClient, services: container.Services
) -> None:
    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.service.operate import demo

    records, data = demo.read(PRINCIPALS, RUNS)
    first = await demo.seed(services, records, data)
    assert first.started == len(data["runs"])
    token = services.staff_tokens.mint("ada", services.clock.now())
    tickets = await _ticket_runs(client, token, "T-81723")
    assert [(t["workflow"], t["subject"]["attributes"]["status"]) for t in tickets] == [
        ("support-ticket", tickets[0]["state"])
    ]
    spam = (await _ticket_runs(client, token, "T-81726"))[0]
    assert spam["subject"]["attributes"]["status"] == spam["state"] != "new"
    again = await demo.seed(services, records, data)  # sent again: no second run
    assert (again.started, again.existing) == (0, len(data["runs"]))
    assert len(await _ticket_runs(client, token, "T-81723")) == 1


async def test_a_correlation_key_too_long_refuses_the_start_and_writes_nothing(
    world: World,
) -> None:
    client, app = world.client, world.people["app"]
    reference = "R" * 201  # expense-approval and support-ticket correlate by the reference
    attributes = {**w.EXPENSE, "reference": reference}
    begun = await w.start(client, app, "expense-approval", "expense", "EXP-LONG", attributes)
    assert begun["__typename"] == "InvalidInput"
    assert "correlates its runs by subject.reference" in begun["message"]
    upserted = await _upsert(client, world.people["helpdesk"], "T-LONG", reference=reference)
    assert upserted["__typename"] == "InvalidInput"
    assert "201 characters long" in upserted["message"]
    found = (await gql(client, RUNS, {"filter": {}}, token=world.people["ada"])).ok()["runs"]
    assert found["totalCount"] == 0  # neither started a run
    shortened = await w.start_expense(client, app, "EXP-LONG")
    assert shortened["__typename"] == "StartRunSuccess"
