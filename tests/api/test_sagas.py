"""Sagas over HTTP (docs/composition.md, "Sagas"), on the ``employee-onboarding`` example:
laptop, accounts and badge run in parallel as saga steps; a hire withdrawn (the ``withdraw``
move, or a cancel) cancels the steps still running and undoes those done, the last done
first, each undo a run of its own, once, under racing workers; ``Run.compensations``, the
timeline and the webhook events show it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow.config import config
from taskflow.core.delivery import webhook_events
from taskflow.service.common import container
from tests.api import workflows as w
from tests.api.test_children import CANCEL, MOVE, kinds, lines, local, settle
from tests.conftest import api_fixtures, gql, services_fixture

pytestmark = pytest.mark.anyio

hiring = services_fixture("hiring", doc="Services with the examples (employee-onboarding).")
api, tokens = api_fixtures("hiring")

RUN = """query($id: ID!) { run(id: $id) {
  id state status
  children { label workflow status run { id workflow status } }
  compensations { step compensation status attempts outcome run { id workflow state status } }
  timeline(first: 100) { edges { node { kind reason details } } }
} }"""
HIRE = {"name": "Grace Hopper", "email": "grace@example.com", "start_date": "2027-01-04"}
#: Who does each step's slot, and the slot's name.
DOERS = {"laptop": ("ivan", "ship_laptop"), "accounts": ("ivan", "open_accounts")}
DOERS["badge"] = ("fay", "issue_badge")
UNDOERS = {"laptop": ("ivan", "collect_laptop"), "accounts": ("ivan", "close_accounts")}
UNDOERS["badge"] = ("fay", "revoke_badge")


async def onboarding(api: httpx.AsyncClient, tokens: dict[str, str], hire: str) -> str:
    started = await w.start(api, tokens["app"], "employee-onboarding", "hire", hire, HIRE)
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def run(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(api, RUN, {"id": run_id}, token=token)).ok()["run"]
    return found


async def do(
    api: httpx.AsyncClient, tokens: dict[str, str], who: tuple[str, str], hire: str
) -> None:
    person, slot = who
    found = await w.slot_named(api, tokens[person], slot, hire)
    done = await w.complete(api, tokens[person], found["id"], {"reference": f"{slot}-{hire}"})
    assert done["__typename"] == "CompleteSuccess", done


async def steps_done(
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    services: container.Services,
    hire: str,
    steps: list[str],
) -> str:
    """An onboarding whose steps ``steps`` are done, in that order, a minute apart."""
    run_id = await onboarding(api, tokens, hire)
    assert await settle(services) == 3  # the three steps start together
    for step in steps:
        services.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
        await do(api, tokens, DOERS[step], hire)
    await settle(services)
    return run_id


async def test_all_steps_done_the_hire_is_ready_and_nothing_is_undone(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await steps_done(api, tokens, hiring, "H-1", ["badge", "laptop", "accounts"])
    found = await run(api, tokens["ada"], run_id)
    assert (found["state"], found["status"]) == ("ready", "COMPLETED")
    assert found["compensations"] == []
    assert "run.compensating" not in kinds(found)
    # The three ends were read back together, as one decision: each kept once.
    assert kinds(found).count("child.ended") == 3


async def test_a_withdrawn_hire_undoes_the_done_steps_last_first_and_cancels_the_rest(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await steps_done(api, tokens, hiring, "H-2", ["laptop", "accounts"])
    withdraw = {"input": {"runId": run_id, "move": "withdraw"}}
    moved = (await gql(api, MOVE, withdraw, token=tokens["hana"])).ok()["move"]
    assert moved["run"] == {"state": "withdrawn", "status": "COMPLETED"}
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    children = {c["label"]: c for c in found["children"]}
    assert sorted(children) == ["accounts", "badge", "laptop"]  # undos are not children
    badge = await run(api, tokens["ada"], children["badge"]["run"]["id"])
    assert badge["status"] == "CANCELLED"  # still running: cancelled, nothing to undo
    undo = found["compensations"]
    assert [(c["step"], c["compensation"], c["status"], c["attempts"]) for c in undo] == [
        ("accounts", "accounts-closure", "LIVE", 1),  # done last: undone first
        ("laptop", "laptop-return", "LIVE", 1),
    ]
    started = lines(found, "run.compensating")
    assert [line["details"]["label"] for line in started] == ["accounts", "laptop"]
    assert started[0]["details"]["step_run"] == local(children["accounts"]["run"]["id"])
    for step in ("accounts", "laptop"):
        await do(api, tokens, UNDOERS[step], "H-2")
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    assert [(c["step"], c["status"]) for c in found["compensations"]] == [
        ("accounts", "SETTLED"),
        ("laptop", "SETTLED"),
    ]
    assert [c["run"]["state"] for c in found["compensations"]] == ["closed", "returned"]
    assert [line["details"]["label"] for line in lines(found, "run.compensated")] == [
        "accounts",
        "laptop",
    ]
    metrics = (await api.get("/metrics")).text
    assert 'taskflow_compensations{outcome="done"} 2.0' in metrics
    assert 'taskflow_compensations{outcome="running"} 0.0' in metrics


async def test_a_cancelled_onboarding_undoes_what_was_done(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await steps_done(api, tokens, hiring, "H-3", ["badge"])
    cancel = {"input": {"runId": run_id, "reason": "the candidate declined"}}
    cancelled = (await gql(api, CANCEL, cancel, token=tokens["ada"])).ok()["cancelRun"]
    assert cancelled["run"]["status"] == "CANCELLED"
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    [undo] = found["compensations"]
    # The parent's cancel cancels its live steps but never its compensations.
    assert (undo["step"], undo["compensation"], undo["run"]["status"]) == (
        "badge",
        "badge-revocation",
        "ACTIVE",
    )


async def test_racing_workers_start_each_compensation_once(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await steps_done(api, tokens, hiring, "H-4", ["laptop", "accounts", "badge"][:2])
    withdraw = {"input": {"runId": run_id, "move": "withdraw"}}
    (await gql(api, MOVE, withdraw, token=tokens["hana"])).ok()
    await asyncio.gather(*(settle(hiring) for _ in range(4)))
    found = await run(api, tokens["ada"], run_id)
    assert len(found["compensations"]) == 2
    assert kinds(found).count("run.compensating") == 2
    revocations = await w.inbox(api, tokens["ivan"])
    assert sorted(s["name"] for s in revocations) == ["close_accounts", "collect_laptop"]


def test_compensation_lines_are_webhook_events() -> None:
    assert webhook_events.KIND_TO_TYPE["run.compensating"] == "run.compensating"
    assert webhook_events.KIND_TO_TYPE["run.compensated"] == "run.compensated"
    assert {"run.compensating", "run.compensated"} <= set(webhook_events.EVENT_TYPES)


ATTENTION = """{ needsAttention(first: 50, filter: {reasons: [COMPENSATION_FAILED]}) {
  edges { node { reason detail } } } }"""


async def failed_laptop_return(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services, hire: str
) -> str:
    """A withdrawn hire whose laptop return failed all its three attempts."""
    run_id = await steps_done(api, tokens, hiring, hire, ["laptop"])
    withdraw = {"input": {"runId": run_id, "move": "withdraw"}}
    (await gql(api, MOVE, withdraw, token=tokens["hana"])).ok()
    await settle(hiring)
    for attempt in (1, 2, 3):
        found = await run(api, tokens["ada"], run_id)
        live = found["compensations"][-1]
        assert (live["attempts"], live["status"]) == (attempt, "LIVE")
        move = {"input": {"runId": live["run"]["id"], "move": "not_returned"}}
        (await gql(api, MOVE, move, token=tokens["ivan"])).ok()
        await asyncio.gather(*(settle(hiring) for _ in range(3)))
        if attempt < 3:  # the next attempt waits for its backoff: 60 s, then 120 s
            waiting = (await run(api, tokens["ada"], run_id))["compensations"][-1]
            assert (waiting["attempts"], waiting["status"]) == (attempt + 1, "STARTING")
            hiring.clock.advance(timedelta(seconds=60 * attempt - 1))  # type: ignore[attr-defined]
            await settle(hiring)
            assert (await run(api, tokens["ada"], run_id))["compensations"][-1] == waiting
            hiring.clock.advance(timedelta(seconds=1))  # type: ignore[attr-defined]
            await settle(hiring)
    return run_id


async def attention(api: httpx.AsyncClient, tokens: dict[str, str]) -> list[dict[str, Any]]:
    items = (await gql(api, ATTENTION, token=tokens["ada"])).ok()["needsAttention"]["edges"]
    return [e["node"] for e in items]


async def test_a_compensation_that_keeps_failing_is_tried_again_then_needs_attention(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await failed_laptop_return(api, tokens, hiring, "H-5")
    found = await run(api, tokens["ada"], run_id)
    assert [(c["attempts"], c["status"]) for c in found["compensations"]] == [
        (1, "SETTLED"),
        (2, "SETTLED"),
        (3, "SETTLED"),
    ]
    assert kinds(found).count("run.compensation_failed") == 3
    items = await attention(api, tokens)
    assert [item["reason"] for item in items] == ["COMPENSATION_FAILED"]
    assert "laptop-return of step laptop failed (unreturned) 3 time(s)" in items[0]["detail"]


RESOLVE = (
    config.PROJECT_ROOT / "graphql" / "operations" / "resolve_compensation.graphql"
).read_text()


def resolving(run_id: str, action: str, step: str = "laptop", reason: str = "r") -> dict[str, Any]:
    return {"runId": run_id, "step": step, "action": action, "reason": reason}


async def resolve(api: httpx.AsyncClient, token: str, variables: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = (await gql(api, RESOLVE, variables, token=token)).ok()[
        "resolveCompensation"
    ]
    return answer


async def test_an_operator_redoes_a_failed_compensation_once(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await failed_laptop_return(api, tokens, hiring, "H-7")
    # Two operators at once: one redo, the other told there is nothing left to resolve.
    answers = await asyncio.gather(
        *(resolve(api, tokens["ada"], resolving(run_id, "REDO", reason="found it")) for _ in "ab")
    )
    assert sorted(a.get("code") or a["__typename"] for a in answers) == [
        "NOT_FOUND",
        "RunSuccess",
    ]
    assert await attention(api, tokens) == []
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    assert [(c["attempts"], c["status"]) for c in found["compensations"]] == [
        (1, "SETTLED"),
        (2, "SETTLED"),
        (3, "SETTLED"),
        (4, "LIVE"),
    ]
    [line] = lines(found, "run.compensation_redone")
    assert "ada redoes the compensation of step 'laptop' (attempt 4): found it" in line["reason"]
    await do(api, tokens, UNDOERS["laptop"], "H-7")
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    assert found["compensations"][-1]["status"] == "SETTLED"
    assert kinds(found).count("run.compensated") == 1
    assert await attention(api, tokens) == []


async def test_an_operator_clears_a_failed_compensation_and_bad_requests_change_nothing(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await failed_laptop_return(api, tokens, hiring, "H-8")
    refused = {
        "INVALID_INPUT": resolving(run_id, "CLEAR", reason="  "),
        "NOT_FOUND": resolving(run_id, "CLEAR", step="badge"),
    }
    for code, variables in refused.items():
        answer = await resolve(api, tokens["ada"], variables)
        assert answer.get("code") == code, answer
    outsider = await resolve(api, tokens["leah"], resolving(run_id, "CLEAR"))
    assert outsider["code"] in ("FORBIDDEN", "NOT_FOUND"), outsider
    assert [item["reason"] for item in await attention(api, tokens)] == ["COMPENSATION_FAILED"]
    cleared = await resolve(api, tokens["ada"], resolving(run_id, "CLEAR", reason="by hand"))
    assert cleared["__typename"] == "RunSuccess", cleared
    assert await attention(api, tokens) == []
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    assert len(found["compensations"]) == 3  # nothing more started
    [line] = lines(found, "run.compensation_cleared")
    assert line["details"]["label"] == "laptop"
    again = await resolve(api, tokens["ada"], resolving(run_id, "REDO"))
    assert again["code"] == "NOT_FOUND"


async def test_a_failed_step_cancels_the_onboarding_and_undoes_the_done_steps(
    api: httpx.AsyncClient, tokens: dict[str, str], hiring: container.Services
) -> None:
    run_id = await steps_done(api, tokens, hiring, "H-6", ["accounts"])
    found = await run(api, tokens["ada"], run_id)
    badge = next(c for c in found["children"] if c["label"] == "badge")["run"]["id"]
    cancel = {"input": {"runId": badge, "reason": "no badge for contractors"}}
    (await gql(api, CANCEL, cancel, token=tokens["ada"])).ok()
    await settle(hiring)
    found = await run(api, tokens["ada"], run_id)
    assert found["status"] == "CANCELLED"  # the badge's failure was not caught
    children = {c["label"]: c["run"]["status"] for c in found["children"]}
    assert children == {"laptop": "CANCELLED", "accounts": "COMPLETED", "badge": "CANCELLED"}
    assert [(c["step"], c["compensation"]) for c in found["compensations"]] == [
        ("accounts", "accounts-closure")
    ]
