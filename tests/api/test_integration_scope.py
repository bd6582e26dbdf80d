"""Integrations act on the runs they started (docs/access.md, "Integrations act on their own
runs"): another application with the same workflow power may read the run, but not cancel it,
update its subject or raise its events; the one that started it may."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api import magic
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


MOVE = """mutation($input: MoveInput!) { move(input: $input) {
  __typename ... on RunSuccess { run { state } } ... on Refusal { code message } } }"""
LINK = """query($id: ID!) { node(id: $id) { ... on MagicLink { id recipientEmail } } }"""


async def _waiting_for_customer(
    client: httpx.AsyncClient, people: dict[str, str], starter: str, ref: str
) -> tuple[str, str]:
    """A ticket ``starter`` opened, asked back to its customer: (run id, customer_reply slot)."""
    started = await w.start(
        client, people[starter], "support-ticket", "ticket", ref, {**w.TICKET, "reference": ref}
    )
    run_id = started["run"]["id"]
    triage = await w.slot_named(client, people["tess"], "triage")
    await w.claim(client, people["tess"], triage["id"])
    await w.complete(
        client, people["tess"], triage["id"], {"priority": "P3", "category": "billing"}
    )
    variables = {"input": {"runId": run_id, "move": "ask_customer", "input": {"question": "?"}}}
    asked = (await gql(client, MOVE, variables, token=people["sasha"])).ok()["move"]
    assert asked["run"] == {"state": "waiting_for_customer"}, asked
    found = await magic.slots(client, people[starter], run_id)
    return run_id, next(s["id"] for s in found if s["name"] == "customer_reply")


async def test_an_integration_links_only_the_runs_it_started(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    gateway, app = people["helpdesk"], people["app"]  # both integrations of support-ticket
    run_id, slot_id = await _waiting_for_customer(client, people, "helpdesk", "T-GW-LINK")

    # The back-office app may not send the gateway's customer a link ...
    refused = await magic.mint(client, app, slot_id, email="ana@example.com")
    assert refused["__typename"] == "NotAllowed", refused
    assert refused["code"] == "FORBIDDEN"
    assert "integrations act only on the runs they started" in refused["message"]
    # ... the gateway, which opened the ticket, may.
    minted = await magic.mint(client, gateway, slot_id, email="ana@example.com")
    assert minted["__typename"] == "MintMagicLinkSuccess", minted
    link_id = minted["link"]["id"]

    # The app reads the run, but not its links: none on the slot, the link is not found,
    # and the timeline's link line does not say whom it went to.
    assert (await magic.slot_links(client, app, slot_id))["links"] == []
    assert (await gql(client, LINK, {"id": link_id}, token=app)).ok()["node"] is None
    lines = await w.timeline(client, app, run_id, ["link.minted"])
    assert [line["kind"] for line in lines] == ["link.minted"]
    assert "ana@example.com" not in str(lines), lines
    # Nor may it revoke the link.
    revoked = dict(
        (await gql(client, magic.REVOKE, {"input": {"linkId": link_id}}, token=app)).ok()[
            "revokeMagicLink"
        ]
    )
    assert revoked["__typename"] == "NotAllowed", revoked
    assert "integrations act only on the runs they started" in revoked["message"]
    shown = await magic.slot_links(client, gateway, slot_id)
    assert [(k["id"], k["status"]) for k in shown["links"]] == [(link_id, "ACTIVE")]

    # The gateway revokes its own ticket's link; a manager still mints on it.
    again = await magic.mint(client, gateway, slot_id, email="ana@example.com")
    assert again["__typename"] == "MintMagicLinkSuccess", again
    variables = {"input": {"linkId": again["link"]["id"]}}
    answer = (await gql(client, magic.REVOKE, variables, token=gateway)).ok()["revokeMagicLink"]
    assert answer["link"]["status"] == "REVOKED", answer
    manager = await magic.mint(client, people["max"], slot_id, email="ana@example.com")
    assert manager["__typename"] == "MintMagicLinkSuccess", manager
