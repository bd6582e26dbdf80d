"""Child runs over HTTP (docs/composition.md): a parent awaits a child by label and routes on
its result; failures are caught or travel up; cancelling a parent cancels its children;
``Run.children``, ``Run.parent``, ``runs(filter: {parent})`` and the timelines link both ways."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.config import config
from taskflow.service.common import container
from taskflow.service.compose import children as lane
from tests.api import magic as m
from tests.api import workflows as w
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
composing, api, tokens = app_with("composing", HERE / "compose_workflows.py")

RUN = """query($id: ID!) { run(id: $id) {
  id workflow state status
  parent { id workflow }
  children { label workflow awaited status outcome run { id workflow state status } }
  timeline(first: 100) { edges { node { kind reason details } } }
} }"""
CHILDREN = """query($parent: ID!) { runs(filter: {parent: $parent}) {
  edges { node { id workflow } } } }"""
BOARD = """{ board(workflow: "compose-parent", includeEnded: true) {
  edges { node { lane childProgress { done total } } } } }"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) {
  __typename ... on RunSuccess { run { status } } ... on Refusal { code message } } }"""
DETACH = (config.PROJECT_ROOT / "graphql" / "operations" / "detach_child.graphql").read_text()
MOVE = """mutation($input: MoveInput!) { move(input: $input) {
  __typename ... on RunSuccess { run { state status } } ... on Refusal { code message } } }"""


async def settle(services: container.Services) -> int:
    """Run the worker's child lane until it has nothing left to do; how many rows it took."""
    total = 0
    while n := await lane.run_due(services):
        total += n
    return total


async def start(api: httpx.AsyncClient, token: str, workflow: str, doc: str) -> str:
    started = await w.start(api, token, workflow, "doc", doc, {"title": f"Document {doc}"})
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def run(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(api, RUN, {"id": run_id}, token=token)).ok()["run"]
    return found


async def progress(api: httpx.AsyncClient, token: str) -> Any:
    """The child progress on the compose-parent board's one card."""
    found = (await gql(api, BOARD, token=token)).ok()["board"]["edges"]
    [card] = [e["node"] for e in found]
    return card["childProgress"]


async def in_flight(api: httpx.AsyncClient) -> float:
    text = (await api.get("/metrics")).text
    [line] = [n for n in text.splitlines() if n.startswith("taskflow_children_in_flight ")]
    return float(line.split()[1])


def local(global_id: str) -> str:
    """The run's own id in a global id (what timeline details name)."""
    return relay.from_global_id(global_id)[1]


def kinds(found: dict[str, Any]) -> list[str]:
    return [e["node"]["kind"] for e in found["timeline"]["edges"]]


def lines(found: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["node"] for e in found["timeline"]["edges"] if e["node"]["kind"] == kind]


async def assessing(
    api: httpx.AsyncClient, tokens: dict[str, str], services: container.Services, vendor: str
) -> str:
    """A vendor handling personal data, its documents in and legal's approval given: the
    onboarding waits on its security assessment, started. Returns the onboarding's id."""
    attributes = {**w.VENDOR, "vendor_number": vendor}
    started = await w.start(api, tokens["app"], "vendor-onboarding", "vendor", vendor, attributes)
    for slot in [s for s in await w.inbox(api, tokens["olga"]) if s["name"] == "upload"]:
        sent = await m.uploaded(api, slot["id"], token=tokens["olga"])
        await w.complete(api, tokens["olga"], slot["id"], {"document": sent})
    legal = await w.slot_named(api, tokens["lee"], "legal_review")
    await w.complete(api, tokens["lee"], legal["id"], {"decision": "approve"})
    await settle(services)
    return str(started["run"]["id"])


async def score(api: httpx.AsyncClient, token: str, doc: str, value: int) -> dict[str, Any]:
    slot = await w.slot_named(api, token, "review", doc)
    return await w.complete(api, token, slot["id"], {"score": value})


async def test_an_awaited_child_hands_its_result_to_the_parent(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    parent_id = await start(api, tokens["app"], "compose-parent", "D-1")
    assert await settle(composing) == 2  # the review and the bare note started
    parent = await run(api, tokens["ada"], parent_id)
    assert (parent["state"], parent["parent"]) == ("waiting", None)
    by_label = {c["label"]: c for c in parent["children"]}
    assert {k: (c["awaited"], c["status"]) for k, c in by_label.items()} == {
        "review": (True, "LIVE"),
        "note": (False, "LIVE"),
    }
    review_id = by_label["review"]["run"]["id"]
    review = await run(api, tokens["ada"], review_id)
    assert review["parent"] == {"id": parent_id, "workflow": "compose-parent"}
    assert lines(review, "run.parent")[0]["details"]["parent_run"] == local(parent_id)
    started = {n["details"]["label"]: n["details"] for n in lines(parent, "child.started")}
    assert started["review"]["child_run"] == local(review_id)  # linked both ways
    listed = (await gql(api, CHILDREN, {"parent": parent_id}, token=tokens["ada"])).ok()
    assert {e["node"]["workflow"] for e in listed["runs"]["edges"]} == {
        "compose-review",
        "compose-note",
    }

    assert await in_flight(api) == 2  # the gauge on /metrics
    assert await progress(api, tokens["ada"]) == {"done": 0, "total": 2}
    done = await score(api, tokens["fiona"], "D-1", 9)
    assert done["run"] == {"state": "passed", "status": "COMPLETED"}
    # The child's end is a durable row: the parent moves when the worker reads it back.
    assert (await run(api, tokens["ada"], parent_id))["state"] == "waiting"
    assert await settle(composing) == 1
    parent = await run(api, tokens["ada"], parent_id)
    assert (parent["state"], parent["status"]) == ("good", "COMPLETED")
    review_row = next(c for c in parent["children"] if c["label"] == "review")
    assert review_row["status"] == "SETTLED"
    assert review_row["outcome"]["result"] == {"score": 9}
    assert review_row["outcome"]["failure"] is None
    assert kinds(parent).count("child.started") == 2
    assert await in_flight(api) == 1  # the bare note still runs
    assert await progress(api, tokens["ada"]) == {"done": 1, "total": 2}
    [ended] = lines(parent, "child.ended")
    assert (ended["details"]["label"], ended["details"]["state"]) == ("review", "passed")


async def test_a_failed_child_is_caught_by_its_kind(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    parent_id = await start(api, tokens["app"], "compose-parent", "D-2")
    await settle(composing)
    await score(api, tokens["fiona"], "D-2", 1)  # the review ends in `rejected`: a failure
    await settle(composing)
    parent = await run(api, tokens["ada"], parent_id)
    assert (parent["state"], parent["status"]) == ("caught", "COMPLETED")
    [caught] = lines(parent, "child.caught")
    assert caught["details"] == {"label": "review", "failure": "rejected", "to": "caught"}


async def test_an_uncaught_failure_cancels_the_parent_and_travels_up(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    top_id = await start(api, tokens["app"], "compose-top", "D-3")
    await settle(composing)
    top = await run(api, tokens["ada"], top_id)
    [inner] = top["children"]
    inner_run = await run(api, tokens["ada"], inner["run"]["id"])
    review_id = next(c for c in inner_run["children"] if c["label"] == "review")["run"]["id"]
    moved = (
        await gql(
            api, MOVE, {"input": {"runId": review_id, "move": "give_up"}}, token=tokens["fiona"]
        )
    ).ok()["move"]
    assert moved["run"] == {"state": "expired", "status": "COMPLETED"}
    await settle(composing)
    inner_run = await run(api, tokens["ada"], inner["run"]["id"])
    assert inner_run["status"] == "CANCELLED"  # compose-parent catches no expiry
    [cancelled] = lines(inner_run, "run.cancelled")
    assert "uncaught expired of child 'review'" in cancelled["reason"]
    # Its bare note was cancelled with it, naming the cause.
    note_id = next(c for c in inner_run["children"] if c["label"] == "note")["run"]["id"]
    note = await run(api, tokens["ada"], note_id)
    assert note["status"] == "CANCELLED"
    reason = lines(note, "run.cancelled")[0]["reason"]
    assert f"its parent run {local(inner['run']['id'])} was cancelled: uncaught expired" in reason
    # The top run sees the same kind (expired) and catches it.
    top = await run(api, tokens["ada"], top_id)
    assert (top["state"], top["children"][0]["outcome"]["failure"]) == ("saw_expiry", "expired")


async def test_cancelling_a_parent_cancels_its_live_children_down_the_chain(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    top_id = await start(api, tokens["app"], "compose-top", "D-4")
    await settle(composing)
    cancel = {"input": {"runId": top_id, "reason": "withdrawn by the author"}}
    answer = (await gql(api, CANCEL, cancel, token=tokens["ada"])).ok()["cancelRun"]
    assert answer["run"]["status"] == "CANCELLED"
    await settle(composing)
    top = await run(api, tokens["ada"], top_id)
    inner = await run(api, tokens["ada"], top["children"][0]["run"]["id"])
    assert inner["status"] == "CANCELLED"
    assert "withdrawn by the author" in lines(inner, "run.cancelled")[0]["reason"]
    for row in inner["children"]:
        leaf = await run(api, tokens["ada"], row["run"]["id"])
        assert leaf["status"] == "CANCELLED", row["label"]
        reason = lines(leaf, "run.cancelled")[0]["reason"]
        assert "its parent run" in reason
        assert "withdrawn by the author" in reason
    assert await settle(composing) == 0  # nothing left in flight


async def test_a_child_that_cannot_start_is_a_refused_failure(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    await start(api, tokens["app"], "compose-review", "D-5")  # the subject has a live review
    parent_id = await start(api, tokens["app"], "compose-parent", "D-5")
    await settle(composing)
    parent = await run(api, tokens["ada"], parent_id)
    assert parent["state"] == "blocked"
    [refused] = lines(parent, "child.refused")
    assert "already has a live 'compose-review' run" in refused["reason"]


async def test_parents_started_together_each_get_their_children_and_a_refusal_stays_its_own(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    # Three parents due at once: the lane starts their children in one set-based start; one
    # child cannot start (its subject has a live review), so each parent goes its own way.
    await start(api, tokens["app"], "compose-review", "D-31")
    parents = [
        await start(api, tokens["app"], "compose-parent", d) for d in ("D-30", "D-31", "D-32")
    ]
    # A review and a note each started; one review refused (its note, not started, then
    # never starts: its parent left the state).
    assert await lane.run_due(composing) == 5
    found = [await run(api, tokens["ada"], p) for p in parents]
    assert [p["state"] for p in found] == ["waiting", "blocked", "waiting"]
    assert [sorted(c["status"] for c in p["children"]) for p in found] == [
        ["LIVE", "LIVE"],
        ["SETTLED", "SETTLED"],
        ["LIVE", "LIVE"],
    ]
    for parent in (found[0], found[2]):
        started = {line["details"]["label"] for line in lines(parent, "child.started")}
        assert started == {"review", "note"}
        for child in parent["children"]:
            kid = await run(api, tokens["ada"], child["run"]["id"])
            assert kid["parent"]["id"] == parent["id"]
            assert [line["details"]["parent_run"] for line in lines(kid, "run.parent")] == [
                local(parent["id"])
            ]
    [refused] = lines(found[1], "child.refused")
    assert "already has a live 'compose-review' run" in refused["reason"]
    assert await settle(composing) == 0  # each row once


async def test_two_workers_resume_a_parent_once(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    parent_id = await start(api, tokens["app"], "compose-parent", "D-6")
    await settle(composing)
    await score(api, tokens["fiona"], "D-6", 5)
    await asyncio.gather(*(lane.run_due(composing) for _ in range(4)))
    parent = await run(api, tokens["ada"], parent_id)
    assert parent["state"] == "fine"
    assert kinds(parent).count("child.ended") == 1


async def test_a_parents_reader_sees_a_child_run_only_with_powers_on_its_workflow(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    run_id = await assessing(api, tokens, composing, "V-7")
    seen = await run(api, tokens["olga"], run_id)  # procurement's lead: vendor-onboarding only
    [assessment] = seen["children"]
    assert (assessment["label"], assessment["status"], assessment["run"]) == (
        "assessment",
        "LIVE",
        None,
    )
    assess = await w.slot_named(api, tokens["seb"], "assess")
    await w.complete(api, tokens["seb"], assess["id"], {"verdict": "approve", "risk": "low"})
    await settle(composing)
    done = await run(api, tokens["ada"], run_id)
    assert (done["state"], done["status"]) == ("onboarded", "COMPLETED")
    assert done["children"][0]["outcome"]["result"] == {"verdict": "approve", "risk": "low"}


async def test_an_operator_of_the_parents_workflow_detaches_a_child_that_then_outlives_it(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    parent_id = await start(api, tokens["app"], "compose-parent", "D-8")
    await settle(composing)
    parent = await run(api, tokens["ada"], parent_id)
    note_id = next(c for c in parent["children"] if c["label"] == "note")["run"]["id"]
    detach = {"runId": note_id, "reason": "the note stands on its own"}
    # Leah leads expense-approval only: powers are per workflow, and the parent's decides.
    refused = (await gql(api, DETACH, detach, token=tokens["leah"])).ok()["detachChild"]
    assert refused["code"] == "NOT_FOUND", refused
    done = (await gql(api, DETACH, detach, token=tokens["ada"])).ok()["detachChild"]
    assert done == {"__typename": "RunSuccess", "run": {"id": note_id, "status": "ACTIVE"}}
    again = (await gql(api, DETACH, detach, token=tokens["ada"])).ok()["detachChild"]
    assert again["code"] == "NOT_FOUND"  # only a LIVE child is detached

    cancel = {"input": {"runId": parent_id, "reason": "no longer needed"}}
    assert (await gql(api, CANCEL, cancel, token=tokens["ada"])).ok()["cancelRun"]["run"]
    await settle(composing)
    parent = await run(api, tokens["ada"], parent_id)
    states = {c["label"]: (c["status"], c["run"]["status"]) for c in parent["children"]}
    assert states == {"review": ("SETTLED", "CANCELLED"), "note": ("DETACHED", "ACTIVE")}
    assert [n["details"]["label"] for n in lines(parent, "child.detached")] == ["note"]
    note = await run(api, tokens["ada"], note_id)
    assert "run.detached" in kinds(note)


MIGRATE = """mutation { migrateRuns(input: {workflow: "compose-moving", toVersion: 2}) {
  __typename ... on Refusal { code message } } }"""


async def test_a_migration_maps_an_awaited_label_and_the_wait_goes_on(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    variables = {
        "input": {
            "workflow": "compose-moving",
            "version": 1,
            "subject": {"type": "doc", "externalId": "D-9", "attributes": {}},
        }
    }
    started = (await gql(api, w.START, variables, token=tokens["app"])).ok()["startRun"]
    run_id = started["run"]["id"]
    await settle(composing)
    migrated = (await gql(api, MIGRATE, token=tokens["ada"])).ok()["migrateRuns"]
    assert migrated["__typename"] == "MigrateRunsSuccess", migrated
    moved = await run(api, tokens["ada"], run_id)
    assert [(c["label"], c["status"]) for c in moved["children"]] == [("check", "LIVE")]
    await score(api, tokens["fiona"], "D-9", 9)
    await settle(composing)
    done = await run(api, tokens["ada"], run_id)
    assert (done["state"], done["status"]) == ("high", "COMPLETED")  # read as child("check")


async def test_a_parent_that_leaves_the_awaiting_state_cancels_the_child_it_awaited(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    run_id = await assessing(api, tokens, composing, "V-10")
    cancel = {"input": {"runId": run_id, "move": "cancel", "input": {"reason": "vendor left"}}}
    moved = (await gql(api, MOVE, cancel, token=tokens["olga"])).ok()["move"]
    assert moved["run"] == {"state": "cancelled", "status": "COMPLETED"}
    await settle(composing)
    done = await run(api, tokens["ada"], run_id)
    [assessment] = done["children"]
    assert (assessment["status"], assessment["run"]["status"]) == ("SETTLED", "CANCELLED")
    child_run = await run(api, tokens["ada"], assessment["run"]["id"])
    [line] = lines(child_run, "run.cancelled")
    assert f"its parent run {local(run_id)} left assessing" in line["reason"]


LEAD = """query($id: ID!) { run(id: $id) { leadTime {
  total { total { seconds } waiting { seconds } onChildren { seconds } }
  states { state leadTime { total { seconds } onChildren { seconds } } } } } }"""


async def test_lead_time_shows_the_wait_on_children_apart(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    parent = await start(api, tokens["app"], "compose-parent", "D-LT")
    composing.clock.advance(timedelta(minutes=10))  # type: ignore[attr-defined]
    await settle(composing)  # the children's rows were written at the start
    composing.clock.advance(timedelta(hours=2))  # type: ignore[attr-defined]
    await score(api, tokens["fiona"], "D-LT", 9)
    composing.clock.advance(timedelta(minutes=5))  # type: ignore[attr-defined]
    await settle(composing)  # the parent is resumed 5 minutes after its child ended
    found = (await gql(api, LEAD, {"id": parent}, token=tokens["ada"])).ok()["run"]["leadTime"]
    total = found["total"]
    assert total["total"]["seconds"] == (10 + 120 + 5) * 60
    assert total["onChildren"]["seconds"] == (10 + 120) * 60  # the bare note is not waited on
    assert total["waiting"]["seconds"] == total["total"]["seconds"]
    waiting = next(s for s in found["states"] if s["state"] == "waiting")
    assert waiting["leadTime"]["onChildren"]["seconds"] == (10 + 120) * 60
