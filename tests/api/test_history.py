"""History at an instant over HTTP: Run.history, Run.stateAt, runs(filter: {stateAt}),
stateCounts, and the refusals of instants in the future or before the runs kept."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.config import config
from tests.api import workflows as w
from tests.conftest import T0, asgi_client, gql, services_with, tokens_for

pytestmark = pytest.mark.anyio

RUN = """query($id: ID!, $at: DateTime!) { run(id: $id) {
  literal: history { state via actor enteredAt leftAt undoneBy }
  effective: history(effective: true) { state }
  stateAt(at: $at) { state enteredAt leftAt }
} }"""
LIST = """query($f: RunFilter!) { runs(filter: $f) { totalCount edges { node { id } } } }"""
COUNTS = """query($w: String!, $at: DateTime!) {
  stateCounts(workflow: $w, at: $at) { workflow at states { state runs } }
}"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename } }"""


def iso(at: Any) -> str:
    return str(at.isoformat())


async def _reviewed_an_hour_in(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> str:
    """An expense run started at T0, approved by finance at T0+1h (-> manager_approval)."""
    run_id: str = (await w.start_expense(client, people["app"], "EXP-H-1"))["run"]["id"]
    frozen_clock.set(T0 + timedelta(hours=1))
    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"])
    await w.complete(client, people["fiona"], review["id"], {"decision": "approve"})
    frozen_clock.set(T0 + timedelta(hours=2))
    return run_id


async def test_a_runs_history_and_its_state_at_an_instant(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    run_id = await _reviewed_an_hour_in(client, people, frozen_clock)
    half = T0 + timedelta(minutes=30)
    run = (await gql(client, RUN, {"id": run_id, "at": iso(half)}, token=people["leah"])).ok()
    literal = run["run"]["literal"]
    assert [(v["state"], v["via"]) for v in literal] == [
        ("submitted", "start"),
        ("manager_approval", "route"),
    ]
    assert literal[0]["leftAt"] == literal[1]["enteredAt"] == iso(T0 + timedelta(hours=1))
    assert literal[1]["leftAt"] is None
    assert literal[1]["undoneBy"] is None
    assert literal[1]["actor"] == "fiona"
    assert [v["state"] for v in run["run"]["effective"]] == ["submitted", "manager_approval"]
    assert run["run"]["stateAt"]["state"] == "submitted"

    later = T0 + timedelta(minutes=90)
    run = (await gql(client, RUN, {"id": run_id, "at": iso(later)}, token=people["leah"])).ok()
    assert run["run"]["stateAt"]["state"] == "manager_approval"
    before = T0 - timedelta(minutes=1)
    run = (await gql(client, RUN, {"id": run_id, "at": iso(before)}, token=people["leah"])).ok()
    assert run["run"]["stateAt"] is None


async def test_runs_in_a_state_at_an_instant_and_the_counts_per_state(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    run_id = await _reviewed_an_hour_in(client, people, frozen_clock)
    other = (await w.start_expense(client, people["app"], "EXP-H-2"))["run"]["id"]
    half = iso(T0 + timedelta(minutes=30))

    def where(state: str, at: str) -> dict[str, Any]:
        return {"f": {"workflow": "expense-approval", "stateAt": {"state": state, "at": at}}}

    found = (await gql(client, LIST, where("submitted", half), token=people["leah"])).ok()
    assert [e["node"]["id"] for e in found["runs"]["edges"]] == [run_id]
    now = iso(frozen_clock.now())
    found = (await gql(client, LIST, where("submitted", now), token=people["leah"])).ok()
    assert [e["node"]["id"] for e in found["runs"]["edges"]] == [other]
    found = (await gql(client, LIST, where("manager_approval", now), token=people["leah"])).ok()
    assert [e["node"]["id"] for e in found["runs"]["edges"]] == [run_id]

    counts = await gql(client, COUNTS, {"w": "expense-approval", "at": now}, token=people["leah"])
    by_state = {s["state"]: s["runs"] for s in counts.ok()["stateCounts"]["states"]}
    assert by_state["submitted"] == 1
    assert by_state["manager_approval"] == 1
    assert sum(by_state.values()) == 2
    counts = await gql(client, COUNTS, {"w": "expense-approval", "at": half}, token=people["leah"])
    by_state = {s["state"]: s["runs"] for s in counts.ok()["stateCounts"]["states"]}
    assert by_state["submitted"] == 1
    assert sum(by_state.values()) == 1

    # Cancelled: it stands nowhere from then on.
    frozen_clock.set(T0 + timedelta(hours=3))
    cancel = {"input": {"runId": run_id, "reason": "duplicate"}}
    assert (await gql(client, CANCEL, cancel, token=people["max"])).ok()
    now = iso(frozen_clock.now())
    found = (await gql(client, LIST, where("manager_approval", now), token=people["leah"])).ok()
    assert found["runs"]["edges"] == []
    run = (await gql(client, RUN, {"id": run_id, "at": now}, token=people["leah"])).ok()
    assert run["run"]["stateAt"] is None
    assert run["run"]["literal"][-1]["leftAt"] == now


async def test_counts_are_for_leads_and_managers_of_the_workflow(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    at = iso(T0)
    refused = await gql(client, COUNTS, {"w": "expense-approval", "at": at}, token=people["sam"])
    assert refused.error_codes == ["FORBIDDEN"]
    refused = await gql(client, COUNTS, {"w": "support-ticket", "at": at}, token=people["tara"])
    assert refused.error_codes == ["FORBIDDEN"]  # a team grant does not cover every run
    unknown = await gql(client, COUNTS, {"w": "nope", "at": at}, token=people["max"])
    assert unknown.error_codes == ["NOT_FOUND"]


async def test_an_instant_in_the_future_is_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    future = iso(T0 + timedelta(days=1))
    refused = await gql(
        client, COUNTS, {"w": "expense-approval", "at": future}, token=people["max"]
    )
    assert refused.error_codes == ["INVALID_INPUT"]
    assert "in the future" in refused.errors[0]["message"]
    f = {"f": {"workflow": "expense-approval", "stateAt": {"state": "submitted", "at": future}}}
    assert (await gql(client, LIST, f, token=people["max"])).error_codes == ["INVALID_INPUT"]
    f = {"f": {"stateAt": {"state": "submitted", "at": iso(T0)}}}
    refused = await gql(client, LIST, f, token=people["max"])
    assert refused.error_codes == ["INVALID_INPUT"]
    assert "needs a workflow" in refused.errors[0]["message"]


async def test_an_instant_before_the_runs_kept_is_refused_naming_the_retention(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> None:
    kept = dataclasses.replace(settings, retention_days=30)
    async with (
        services_with(database_url, kept, frozen_clock) as services,
        asgi_client(services) as client,
    ):
        token = tokens_for(services)["max"]
        old = iso(T0 - timedelta(days=31))
        refused = await gql(client, COUNTS, {"w": "expense-approval", "at": old}, token=token)
        assert refused.error_codes == ["OUTSIDE_RETENTION"]
        (error,) = refused.errors
        assert error["extensions"]["facts"]["retention_days"] == 30
        assert error["extensions"]["facts"]["earliest"] == iso(T0 - timedelta(days=30))
        assert "kept 30 days" in error["message"]
        f = {"f": {"workflow": "expense-approval", "stateAt": {"state": "submitted", "at": old}}}
        assert (await gql(client, LIST, f, token=token)).error_codes == ["OUTSIDE_RETENTION"]
        recent = iso(T0 - timedelta(days=29))
        counted = await gql(client, COUNTS, {"w": "expense-approval", "at": recent}, token=token)
        assert counted.ok()["stateCounts"]["states"]
