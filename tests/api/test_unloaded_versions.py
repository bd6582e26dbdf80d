"""Runs on a version that left the code stay readable; acting on a live one is refused.

docs/versions.md: "a version may leave the code once no live run is on it" (or once a later
version declares a migration for its runs). Its runs are still in the database, and the
registry (``deployed_definition``) still holds the version's document: every read of runs
answers them from it. Only acting on a live run of that version is refused, naming the
version and ``taskflow runs migrate``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from taskflow import clock
from taskflow.service.common import container
from taskflow.service.versions import definitions, deployments, run_migrations
from tests.api import workflows as w
from tests.conftest import asgi_client, gql, services_fixture, tokens_for

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent

versioned = services_fixture(
    "versioned",
    HERE / "version_workflows.py",
    doc="Services with the examples and ``version_workflows.py``.",
)

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on StartRunSuccess { run { id } } ... on Refusal { code message } } }"""

RUN_FIELDS = """id workflow definitionVersion state status
  slots { id name label status fields { name type required } run { id } }
  moves { name } checklist { name } leadTime { total { total { seconds } } }
  timeline(first: 50) { edges { node { kind } } }"""

RUN = f"query($id: ID!) {{ run(id: $id) {{ {RUN_FIELDS} }} }}"
NODE = "query($id: ID!) { node(id: $id) { __typename ... on Run { id definitionVersion } } }"
SLOT = "query($id: ID!) { slot(id: $id) { id name label status run { id definitionVersion } } }"
RUNS = """query($filter: RunFilter) { runs(first: 100, filter: $filter) {
  totalCount edges { node { id definitionVersion state status } } } }"""
BOARD = """query($ended: Boolean!) {
  board(workflow: "leave-request", first: 100, includeEnded: $ended) {
  edges { node { lane run { id definitionVersion } slots { name label } moves { name } } } } }"""
REPORT = """query($from: DateTime!) { slaReport(from: $from, groupBy: [WORKFLOW, VERSION]) {
  rows { workflow version opened } } }"""
ACT = """mutation($id: ID!) {
  claim(input: {slotId: $id}) { __typename ... on Refusal { code message } }
  complete(input: {slotId: $id, payload: {decision: "approve"}}) {
    __typename ... on Refusal { code message } } }"""


async def _start(api: httpx.AsyncClient, token: str, external_id: str, version: int) -> str:
    variables = {
        "input": {
            "workflow": "leave-request",
            "version": version,
            "subject": {"type": "leave", "externalId": external_id, "attributes": {}},
        }
    }
    started = (await gql(api, START, variables, token=token)).ok()["startRun"]
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


@dataclasses.dataclass
class Parked:
    """Runs of version 1 (one ended, one live) and of version 2, and the v2-only services."""

    only_v2: container.Services
    ended: str
    live: str
    live_slot: str
    newer: str


@pytest.fixture
async def parked(versioned: container.Services) -> Parked:
    tokens = tokens_for(versioned)
    await deployments.register(versioned)  # records both versions' documents
    async with asgi_client(versioned) as api:
        ended = await _start(api, tokens["app"], "LEAVE-END", 1)
        live = await _start(api, tokens["app"], "LEAVE-LIVE", 1)
        newer = await _start(api, tokens["app"], "LEAVE-NEW", 2)
        review = await w.slot_named(api, tokens["max"], "review", "LEAVE-END")
        await w.claim(api, tokens["max"], review["id"])
        done = await w.complete(api, tokens["max"], review["id"], {"decision": "approve"})
        assert done["__typename"] == "CompleteSuccess", done
        live_slot = (await w.slot_named(api, tokens["max"], "review", "LEAVE-LIVE"))["id"]
    # The next deploy: version 1's class has left the code (version 2 declares a migration
    # for its live runs, so the start goes on, docs/versions.md).
    catalog = definitions.Catalog(
        [d for d in versioned.catalog if (d.name, d.version) != ("leave-request", 1)]
    )
    only_v2 = dataclasses.replace(versioned, catalog=catalog)
    await deployments.register(only_v2)
    return Parked(only_v2, ended, live, live_slot, newer)


@pytest.fixture
async def api(parked: Parked) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(parked.only_v2) as http:
        yield http


async def test_every_read_answers_runs_of_a_version_that_left_the_code(
    parked: Parked, api: httpx.AsyncClient
) -> None:
    tokens = tokens_for(parked.only_v2)
    for who in ("ada", "max", "app"):
        token = tokens[who]
        for run_id, state in ((parked.ended, "approved"), (parked.live, "review")):
            run = (await gql(api, RUN, {"id": run_id}, token=token)).ok()["run"]
            assert run is not None, (who, run_id)
            assert (run["definitionVersion"], run["state"]) == (1, state)
            assert next(e["node"]["kind"] for e in run["timeline"]["edges"]) == "run.started"
            node = (await gql(api, NODE, {"id": run_id}, token=token)).ok()["node"]
            assert node == {"__typename": "Run", "id": run_id, "definitionVersion": 1}
        live = (await gql(api, RUN, {"id": parked.live}, token=token)).ok()["run"]
        assert [(s["name"], s["label"], s["status"]) for s in live["slots"]] == [
            ("review", "Review leave request", "OPEN")
        ]
        assert live["slots"][0]["fields"] == [
            {"name": "decision", "type": "choice", "required": True}
        ]
        slot = (await gql(api, SLOT, {"id": parked.live_slot}, token=token)).ok()["slot"]
        assert slot["label"] == "Review leave request"
        assert slot["run"] == {"id": parked.live, "definitionVersion": 1}

        listed = (await gql(api, RUNS, {"filter": None}, token=token)).ok()["runs"]
        ids = {e["node"]["id"] for e in listed["edges"]}
        assert {parked.ended, parked.live, parked.newer} <= ids, who
        mine = (await gql(api, RUNS, {"filter": {"workflow": "leave-request"}}, token=token)).ok()
        assert {e["node"]["id"] for e in mine["runs"]["edges"]} == {
            parked.ended,
            parked.live,
            parked.newer,
        }
        v1 = {"workflow": "leave-request", "version": 1}
        only_v1 = (await gql(api, RUNS, {"filter": v1}, token=token)).ok()["runs"]
        assert {e["node"]["id"] for e in only_v1["edges"]} == {parked.ended, parked.live}

        board = (await gql(api, BOARD, {"ended": True}, token=token)).ok()["board"]
        cards = {e["node"]["run"]["id"]: e["node"] for e in board["edges"]}
        assert {parked.ended, parked.live, parked.newer} <= set(cards), who
        assert cards[parked.live]["lane"] == "review"
        assert cards[parked.live]["slots"] == [{"name": "review", "label": "Review leave request"}]

    since = (parked.only_v2.clock.now() - timedelta(days=1)).isoformat()
    # The SLA report answers (its rows are per slot measure, kept without the definition).
    report = await gql(api, REPORT, {"from": since}, token=tokens["max"])
    assert report.ok()["slaReport"]["rows"] is not None

    # The manager's inbox still lists the open slot of the live version-1 run.
    assert (await w.slot_named(api, tokens["max"], "review", "LEAVE-LIVE"))[
        "id"
    ] == parked.live_slot


async def test_acting_on_a_live_run_of_a_version_that_left_the_code_is_refused(
    parked: Parked, api: httpx.AsyncClient
) -> None:
    tokens = tokens_for(parked.only_v2)
    acted = (await gql(api, ACT, {"id": parked.live_slot}, token=tokens["max"])).ok()
    for answer in (acted["claim"], acted["complete"]):
        assert answer["__typename"] == "NotFoundRefusal", answer
        assert answer["code"] == "NOT_FOUND"
        message = answer["message"]
        assert "'leave-request' version 1" in message, message
        assert "taskflow runs migrate leave-request --to 2 --apply" in message, message
    # Nothing changed: the slot is still open, nobody holds it.
    slot = (await gql(api, SLOT, {"id": parked.live_slot}, token=tokens["max"])).ok()["slot"]
    assert slot["status"] == "OPEN"


async def test_after_the_migration_the_ended_run_still_reads_on_its_version(
    parked: Parked, api: httpx.AsyncClient, frozen_clock: clock.FrozenClock
) -> None:
    await run_migrations.apply(parked.only_v2, "leave-request", 2)
    tokens = tokens_for(parked.only_v2)
    ended = (await gql(api, RUN, {"id": parked.ended}, token=tokens["ada"])).ok()["run"]
    assert (ended["definitionVersion"], ended["status"]) == (1, "COMPLETED")
    moved = (await gql(api, RUN, {"id": parked.live}, token=tokens["ada"])).ok()["run"]
    assert (moved["definitionVersion"], moved["state"]) == (2, "review")
    listed = (await gql(api, RUNS, {"filter": None}, token=tokens["ada"])).ok()["runs"]
    assert parked.ended in {e["node"]["id"] for e in listed["edges"]}
