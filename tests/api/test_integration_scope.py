"""Integrations act on the runs they started (docs/access.md, "Integrations act on their own
runs"): another application with the same workflow power may read the run, but not cancel it,
update its subject or raise its events; the one that started it may."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename
  ... on RunSuccess { run { status } } ... on Refusal { code message } } }"""
UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on UpdateSubjectSuccess { runs { id } } ... on Refusal { code message } } }"""
RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename
  ... on RaiseEventSuccess { run { state } } ... on Refusal { code message } } }"""
RUN = """query($id: ID!) { run(id: $id) { state status subject { attributes } } }"""


async def _cancel(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    variables = {"input": {"runId": run_id, "reason": "duplicate ticket"}}
    return dict((await gql(api, CANCEL, variables, token=token)).ok()["cancelRun"])


async def _update(api: httpx.AsyncClient, token: str, ref: str) -> dict[str, Any]:
    attributes = {**w.TICKET, "reference": ref, "title": "Changed by an integration"}
    variables = {"input": {"type": "ticket", "externalId": ref, "attributes": attributes}}
    return dict((await gql(api, UPDATE, variables, token=token)).ok()["updateSubject"])


async def _triage(api: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    variables = {
        "input": {
            "event": "triaged",
            "payload": {"priority": "P3", "category": "question"},
            "target": {"runId": run_id},
        }
    }
    return dict((await gql(api, RAISE, variables, token=token)).ok()["raiseEvent"])


async def test_an_integration_acts_only_on_the_runs_it_started(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    gateway, app = people["helpdesk"], people["app"]  # both integrations of support-ticket
    theirs = await w.start(
        client, gateway, "support-ticket", "ticket", "T-GW-1", {**w.TICKET, "reference": "T-GW-1"}
    )
    assert theirs["__typename"] == "StartRunSuccess", theirs
    run_id = theirs["run"]["id"]

    # The back-office app reads the gateway's ticket (its grant reaches the workflow) ...
    before = (await gql(client, RUN, {"id": run_id}, token=app)).ok()["run"]
    assert before["state"] == "new"
    # ... but acts on none of it.
    cancelled = await _cancel(client, app, run_id)
    updated = await _update(client, app, "T-GW-1")
    for refused in (cancelled, updated):
        assert refused["__typename"] == "NotAllowed", refused
        assert refused["code"] == "FORBIDDEN"
        assert "integrations act only on the runs they started" in refused["message"]
    raised = await _triage(client, app, run_id)
    assert raised["__typename"] == "NotRaiser", raised
    assert "integrations act only on the runs they started" in raised["message"]
    after = (await gql(client, RUN, {"id": run_id}, token=gateway)).ok()["run"]
    assert after == before  # nothing changed

    # The app's own ticket: it triages, updates and cancels it.
    own = await w.start(
        client, app, "support-ticket", "ticket", "T-APP-1", {**w.TICKET, "reference": "T-APP-1"}
    )
    own_id = own["run"]["id"]
    assert (await _triage(client, app, own_id))["__typename"] == "RaiseEventSuccess"
    assert (await _update(client, app, "T-APP-1"))["__typename"] == "UpdateSubjectSuccess"
    assert (await _cancel(client, app, own_id))["run"] == {"status": "CANCELLED"}
    # The gateway may not cancel the app's ticket either.
    assert (await _cancel(client, gateway, own_id))["__typename"] == "NotAllowed"

    # The gateway acts on its own ticket; a lead of the workflow and an admin on any.
    assert (await _update(client, gateway, "T-GW-1"))["__typename"] == "UpdateSubjectSuccess"
    assert (await _cancel(client, gateway, run_id))["run"] == {"status": "CANCELLED"}
    other = await w.start(
        client, gateway, "support-ticket", "ticket", "T-GW-2", {**w.TICKET, "reference": "T-GW-2"}
    )
    assert (await _cancel(client, people["max"], other["run"]["id"]))["run"] == {
        "status": "CANCELLED"
    }
