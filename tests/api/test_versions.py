"""Runs stay on the version they started on while a later version is deployed beside it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.versions import deployments
from tests.api import workflows as w
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename
  ... on StartRunSuccess { run { id state definitionVersion definitionDigest } }
  ... on Refusal { code message }
} }"""


versioned, api, tokens = app_with("versioned", HERE / "version_workflows.py")


async def _start(
    api: httpx.AsyncClient, token: str, external_id: str, version: int | None = None
) -> dict[str, Any]:
    variables: dict[str, Any] = {
        "input": {
            "workflow": "leave-request",
            "subject": {"type": "leave", "externalId": external_id, "attributes": {}},
        }
    }
    if version is not None:
        variables["input"]["version"] = version
    return (await gql(api, START, variables, token=token)).ok()["startRun"]


async def test_a_v1_run_completes_on_v1_rules_while_starts_go_to_v2(
    api: httpx.AsyncClient, tokens: dict[str, str], versioned: container.Services
) -> None:
    # A run started on version 1 (while it was the one deployed, or named explicitly).
    old = await _start(api, tokens["app"], "LEAVE-1", version=1)
    assert old["__typename"] == "StartRunSuccess"
    v1 = versioned.catalog.get("leave-request", 1)
    assert old["run"]["definitionVersion"] == 1
    assert old["run"]["definitionDigest"] == v1.digest

    # With version 2 loaded beside it, a start without a version goes to version 2.
    new = await _start(api, tokens["app"], "LEAVE-2")
    assert new["run"]["definitionVersion"] == 2
    assert new["run"]["definitionDigest"] == versioned.catalog.get("leave-request", 2).digest

    # The registry records both versions and counts one live run on each.
    await deployments.register(versioned)
    listed = {(d.name, d.version): d for d in await deployments.listing(versioned)}
    assert (listed[("leave-request", 1)].live_runs, listed[("leave-request", 1)].status) == (
        1,
        "loaded",
    )
    assert listed[("leave-request", 2)].live_runs == 1

    # The manager approves both: v1's rules end the old run, v2's send the new one to HR.
    for external_id, _run in (("LEAVE-1", old), ("LEAVE-2", new)):
        review = await w.slot_named(api, tokens["max"], "review", external_id)
        await w.claim(api, tokens["max"], review["id"])
        done = await w.complete(api, tokens["max"], review["id"], {"decision": "approve"})
        assert done["__typename"] == "CompleteSuccess", done
    runs = {
        external_id: (await gql(api, RUN, {"id": run["run"]["id"]}, token=tokens["ada"])).ok()[
            "run"
        ]
        for external_id, run in (("LEAVE-1", old), ("LEAVE-2", new))
    }
    assert runs["LEAVE-1"] == {"state": "approved", "status": "COMPLETED", "definitionVersion": 1}
    assert runs["LEAVE-2"] == {"state": "hr_check", "status": "ACTIVE", "definitionVersion": 2}


RUN = "query($id: ID!) { run(id: $id) { state status definitionVersion } }"


async def test_a_start_on_a_version_that_is_not_loaded_is_refused(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    refused = await _start(api, tokens["app"], "LEAVE-3", version=7)
    assert refused["__typename"] == "NotFoundRefusal", refused
    assert "has no version 7 (it has 1, 2)" in refused["message"]


MIGRATE = """mutation($input: MigrateRunsInput!) { migrateRuns(input: $input) {
  __typename
  ... on MigrateRunsSuccess { batches migrated { step runs } }
  ... on Refusal { code message }
} }"""


async def test_admins_migrate_runs_to_a_version_through_graphql(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    old = await _start(api, tokens["app"], "LEAVE-4", version=1)
    request = {"input": {"workflow": "leave-request", "toVersion": 2, "idempotencyKey": "m-1"}}

    refused = (await gql(api, MIGRATE, request, token=tokens["max"])).ok()["migrateRuns"]
    assert refused["__typename"] == "NotAllowed", refused
    assert "'admin' role" in refused["message"]

    done = (await gql(api, MIGRATE, request, token=tokens["ada"])).ok()["migrateRuns"]
    assert done == {
        "__typename": "MigrateRunsSuccess",
        "batches": 1,
        "migrated": [{"step": "STAY", "runs": 1}],
    }
    # The same key answers the same, and nothing is migrated twice.
    again = (await gql(api, MIGRATE, request, token=tokens["ada"])).ok()["migrateRuns"]
    assert again == done
    fresh = {"input": {"workflow": "leave-request", "toVersion": 2}}
    assert (await gql(api, MIGRATE, fresh, token=tokens["ada"])).ok()["migrateRuns"][
        "migrated"
    ] == []

    run = (await gql(api, RUN, {"id": old["run"]["id"]}, token=tokens["ada"])).ok()["run"]
    assert run == {"state": "review", "status": "ACTIVE", "definitionVersion": 2}
    timeline = await w.timeline(api, tokens["ada"], old["run"]["id"], ["run.migrated"])
    assert timeline[0]["details"] == {
        "from_version": 1,
        "to_version": 2,
        "from_state": "review",
        "to_state": "review",
        "step": "stay",
    }


BOARD = """query($workflow: String!) { board(workflow: $workflow) {
  edges { node { lane run { definitionVersion subject { externalId } } } }
} }"""
REPORT = """query($from: DateTime!) {
  slaReport(from: $from, groupBy: [WORKFLOW, VERSION], filter: {workflow: "leave-request"}) {
    rows { workflow version opened stillOpen }
  }
}"""
LANES = """{ workflows { name versions { version lanes } } }"""


async def test_the_board_and_the_report_show_runs_of_both_versions(
    api: httpx.AsyncClient, tokens: dict[str, str], versioned: container.Services
) -> None:
    await _start(api, tokens["app"], "LEAVE-1", version=1)
    await _start(api, tokens["app"], "LEAVE-2")
    await _start(api, tokens["app"], "LEAVE-3")
    # LEAVE-3 goes on to version 2's HR check, a state version 1 does not have.
    review = await w.slot_named(api, tokens["max"], "review", "LEAVE-3")
    await w.claim(api, tokens["max"], review["id"])
    await w.complete(api, tokens["max"], review["id"], {"decision": "approve"})

    # One board, one set of lanes by state name: both versions' runs in "review".
    board = (await gql(api, BOARD, {"workflow": "leave-request"}, token=tokens["ada"])).ok()
    cards = {
        e["node"]["run"]["subject"]["externalId"]: (
            e["node"]["lane"],
            e["node"]["run"]["definitionVersion"],
        )
        for e in board["board"]["edges"]
    }
    assert cards == {"LEAVE-1": ("review", 1), "LEAVE-2": ("review", 2), "LEAVE-3": ("hr_check", 2)}
    # The lanes each version draws: hr_check is version 2's alone (docs/versions.md).
    lanes = (await gql(api, LANES, {}, token=tokens["ada"])).ok()["workflows"]
    (leave,) = [x for x in lanes if x["name"] == "leave-request"]
    assert {v["version"]: v["lanes"] for v in leave["versions"]} == {
        1: ["review", "approved", "rejected"],
        2: ["review", "hr_check", "approved", "rejected"],
    }

    # The SLA report by version: one row per version, slots counted where their run is.
    versioned.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    variables = {"from": "2026-11-01T00:00:00Z"}
    rows = (await gql(api, REPORT, variables, token=tokens["ada"])).ok()["slaReport"]["rows"]
    assert rows == [
        {"workflow": "leave-request", "version": 1, "opened": 1, "stillOpen": 1},
        {"workflow": "leave-request", "version": 2, "opened": 3, "stillOpen": 2},
    ]
