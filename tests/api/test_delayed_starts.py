"""Delayed starts over HTTP: ``StartRunInput.startAt`` (an instant, or real or business time).

A delayed start is a SCHEDULED run: listed, the subject's live run (a second start is
refused), cancellable; the worker starts it when its timer falls due, exactly once however
many workers race for it (their batches take the run ``SKIP LOCKED``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.conftest import T0, app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
start_services, api, tokens = app_with("start_services", HERE / "start_workflows.py")

START = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename
  ... on StartRunSuccess { run { id state status stateEnteredAt slots { name status } } }
  ... on RunExists { runId }
  ... on Refusal { code message } } }"""
RUN = """query($id: ID!) { run(id: $id) { state status slots { name status }
  timeline(first: 50) { edges { node { kind actor details } } } } }"""
LISTED = """query($status: [RunStatus!]) { runs(first: 20, filter: {workflow: "four-eyes",
  status: $status}) { totalCount edges { node { id status } } } }"""
FIELD = """mutation($i: StartRunInput!) { startRun(input: $i) {
  ... on InvalidInput { field } } }"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename
  ... on RunSuccess { run { status } } ... on Refusal { code message } } }"""


async def _start(client: httpx.AsyncClient, token: str, ref: str, **more: Any) -> dict[str, Any]:
    variables = {
        "input": {
            "workflow": "four-eyes",
            "subject": {"type": "request", "externalId": ref, "attributes": {"x": 1}},
            **more,
        }
    }
    answer: dict[str, Any] = (await gql(client, START, variables, token=token)).ok()["startRun"]
    return answer


async def _run(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(client, RUN, {"id": run_id}, token=token)).ok()["run"]
    return found


Fire = Callable[..., Awaitable[list[int]]]


@pytest.fixture
def fire(start_services: container.Services, frozen_clock: clock.FrozenClock) -> Fire:
    """Move the clock on by ``by``, then run ``workers`` workers' timer batches at once."""

    async def go(by: timedelta, workers: int = 1) -> list[int]:
        frozen_clock.advance(by)
        now = frozen_clock.now()
        return list(
            await asyncio.gather(*(timers.run_due(start_services, now) for _ in range(workers)))
        )

    return go


def _kinds(run: dict[str, Any]) -> list[str]:
    return [e["node"]["kind"] for e in run["timeline"]["edges"]]


async def test_a_delayed_start_is_scheduled_listed_exclusive_then_started_once(
    api: httpx.AsyncClient, tokens: dict[str, str], fire: Fire
) -> None:
    app = tokens["app"]
    at = (T0 + timedelta(hours=2)).isoformat()
    answer = await _start(api, app, "R-1", startAt={"instant": at})
    run = answer["run"]
    assert (run["status"], run["state"], run["slots"]) == ("SCHEDULED", "review", [])
    listed = (await gql(api, LISTED, {"status": ["SCHEDULED"]}, token=app)).ok()["runs"]
    assert [e["node"]["id"] for e in listed["edges"]] == [run["id"]]
    second = await _start(api, app, "R-1")
    assert (second["__typename"], second["runId"]) == ("RunExists", run["id"])

    await fire(timedelta(hours=1, minutes=59))
    assert (await _run(api, app, run["id"]))["status"] == "SCHEDULED"

    # Three workers race for the due start: one starts it.
    assert sum(await fire(timedelta(minutes=1), workers=3)) == 1
    started = await _run(api, app, run["id"])
    assert (started["status"], started["state"]) == ("ACTIVE", "review")
    assert started["slots"] == [{"name": "approve", "status": "OPEN"}]
    kinds = _kinds(started)
    assert kinds.count("run.scheduled") == kinds.count("run.started") == 1
    assert kinds.index("run.scheduled") < kinds.index("run.started")
    assert await fire(timedelta(days=1)) == [0]
    assert _kinds(await _run(api, app, run["id"])).count("run.started") == 1


async def test_a_scheduled_run_is_cancelled_and_never_starts(
    api: httpx.AsyncClient, tokens: dict[str, str], fire: Fire
) -> None:
    app = tokens["app"]
    run = (await _start(api, app, "R-2", startAt={"after": {"minutes": 30}}))["run"]
    assert run["status"] == "SCHEDULED"
    assert run["stateEnteredAt"].startswith((T0 + timedelta(minutes=30)).isoformat()[:19])
    cancel = {"input": {"runId": run["id"], "reason": "not needed after all"}}
    cancelled = (await gql(api, CANCEL, cancel, token=app)).ok()["cancelRun"]
    assert cancelled["run"]["status"] == "CANCELLED"
    assert await fire(timedelta(hours=1)) == [0]
    after = await _run(api, app, run["id"])
    assert after["status"] == "CANCELLED"
    assert "run.started" not in _kinds(after)
    # The subject is free again: a new start is let in.
    assert (await _start(api, app, "R-2"))["run"]["status"] == "ACTIVE"


async def test_a_business_time_delay_counts_working_hours_on_the_calendar(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    # T0 is Tuesday 09:00 in London (08:30 of work a day): 10 working hours on is
    # Wednesday 10:30; in real time it would be Tuesday 19:00.
    after = {"hours": 10, "business": True, "calendar": "uk-london"}
    run = (await _start(api, tokens["app"], "R-3", startAt={"after": after}))["run"]
    assert run["stateEnteredAt"].startswith("2026-12-02T10:30:00")
    real = (await _start(api, tokens["app"], "R-4", startAt={"after": {"hours": 10}}))["run"]
    assert real["stateEnteredAt"].startswith("2026-12-01T19:00:00")


async def test_an_instant_not_in_the_future_starts_at_once(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    run = (await _start(api, tokens["app"], "R-5", startAt={"instant": T0.isoformat()}))["run"]
    assert run["status"] == "ACTIVE"


@pytest.mark.parametrize(
    ("start_at", "field"),
    [
        ({}, "startAt"),
        ({"instant": "2026-12-02T09:00:00Z", "after": {"hours": 1}}, "startAt"),
        ({"after": {"hours": 1, "days": 1}}, "startAt.after"),
        ({"after": {"hours": 0}}, "startAt.after.amount"),
        ({"after": {"hours": 1, "business": True}}, "startAt.after.calendar"),  # no calendar
        ({"after": {"hours": 1, "calendar": "uk-london"}}, "startAt.after.calendar"),
        ({"after": {"hours": 1, "business": True, "calendar": "mars"}}, "startAt.after.calendar"),
        ({"after": {"days": 400}}, "startAt"),
    ],
)
async def test_a_bad_start_at_is_refused_and_starts_nothing(
    api: httpx.AsyncClient, tokens: dict[str, str], start_at: dict[str, Any], field: str
) -> None:
    refused = await _start(api, tokens["app"], "R-6", startAt=start_at)
    assert refused["__typename"] == "InvalidInput", refused
    assert (await gql(api, LISTED, {}, token=tokens["app"])).ok()["runs"]["totalCount"] == 0
    found = await gql(
        api,
        FIELD,
        {
            "i": {
                "workflow": "four-eyes",
                "subject": {"type": "request", "externalId": "R-6", "attributes": {}},
                "startAt": start_at,
            }
        },
        token=tokens["app"],
    )
    assert found.ok()["startRun"]["field"] == field


async def test_a_delayed_start_cannot_be_awaited(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    refused = await _start(
        api, tokens["app"], "R-7", startAt={"after": {"hours": 1}}, waitFor="SLOT"
    )
    assert refused["__typename"] == "InvalidInput"
    assert "waitFor" in refused["message"]
