"""A principal's lifecycle: deactivation sticks, tokens can be revoked, held slots return.

Each of these was an exploit on the service before (issue 15.5): an update that left
``active`` out re-activated a deactivated person and revived every old token; nobody's
tokens could be revoked; a deactivated holder kept their slots.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

ME = "{ me { login active tokensValidAfter } }"
UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on UpsertPrincipalSuccess { principal { login active } }
  ... on Refusal { code message } } }"""
DEACTIVATE = """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
  __typename ... on DeactivatePrincipalSuccess { principal { active tokensValidAfter } }
  ... on Refusal { code message } } }"""
SIGN_OUT_OPERATION = (
    Path(__file__).resolve().parents[2] / "graphql" / "operations" / "sign_out_everywhere.graphql"
).read_text()
SIGN_OUT = """mutation($input: SignOutEverywhereInput!) { signOutEverywhere(input: $input) {
  __typename ... on SignOutEverywhereSuccess { principal { login tokensValidAfter } }
  ... on Refusal { code message } } }"""


def gid(login: str) -> str:
    return relay.to_global_id("Principal", login)


async def test_an_update_without_active_keeps_a_deactivation(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    deactivated = await gql(client, DEACTIVATE, {"id": gid("fiona")}, token=people["ada"])
    assert deactivated.ok()["deactivatePrincipal"]["principal"]["active"] is False
    # An admin edits her display name, leaving `active` out: she stays deactivated...
    update = {"login": "fiona", "displayName": "Fiona F.", "roles": ["finance"]}
    updated = (await gql(client, UPSERT, {"input": update}, token=people["ada"])).ok()
    assert updated["upsertPrincipal"]["principal"]["active"] is False
    # ... and her old token stays refused.
    refused = await gql(client, ME, token=people["fiona"])
    assert refused.status == 401
    assert refused.error_codes == ["UNAUTHENTICATED"]


async def test_reactivation_is_explicit_and_old_tokens_stay_refused(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    await gql(client, DEACTIVATE, {"id": gid("fiona")}, token=people["ada"])
    frozen_clock.advance(timedelta(minutes=1))
    update = {"login": "fiona", "displayName": "Fiona", "roles": ["finance"], "active": True}
    back = (await gql(client, UPSERT, {"input": update}, token=people["ada"])).ok()
    assert back["upsertPrincipal"]["principal"]["active"] is True
    refused = await gql(client, ME, token=people["fiona"])
    assert refused.error_codes == ["UNAUTHENTICATED"]
    assert "taskflow token" in refused.errors[0]["message"]
    fresh = services.staff_tokens.mint("fiona", frozen_clock.now())
    assert (await gql(client, ME, token=fresh)).ok()["me"]["active"] is True


async def test_loading_a_file_without_active_keeps_a_deactivation(
    client: httpx.AsyncClient, people: dict[str, str], services: container.Services, tmp_path: Path
) -> None:
    await gql(client, DEACTIVATE, {"id": gid("fiona")}, token=people["ada"])
    for name, text in (
        ("people.json", json.dumps([{"id": "fiona", "display_name": "Fiona"}])),
        ("people.csv", "id,display_name,active\nfiona,Fiona,\n"),
    ):
        path = tmp_path / name
        path.write_text(text)
        await principal_service.load(services, principal_service.parse_file(path))
        stored = await principal_service.get(services, "fiona")
        assert stored is not None
        assert stored.active is False, name
    assert (await gql(client, ME, token=people["fiona"])).status == 401


async def test_sign_out_everywhere_refuses_earlier_tokens(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> None:
    frozen_clock.advance(timedelta(minutes=5))
    second = services.staff_tokens.mint("fiona", frozen_clock.now())
    frozen_clock.advance(timedelta(minutes=5))
    signed_out = await gql(client, SIGN_OUT_OPERATION, {}, token=people["fiona"])
    assert signed_out.ok()["signOutEverywhere"]["principal"]["login"] == "fiona"
    for old in (people["fiona"], second):
        refused = await gql(client, ME, token=old)
        assert refused.status == 401
        assert refused.error_codes == ["UNAUTHENTICATED"]
        assert "signed out everywhere" in refused.errors[0]["message"]
    frozen_clock.advance(timedelta(seconds=1))
    fresh = services.staff_tokens.mint("fiona", frozen_clock.now())
    assert (await gql(client, ME, token=fresh)).ok()["me"]["login"] == "fiona"
    # Others' tokens are untouched.
    assert (await gql(client, ME, token=people["frank"])).ok()["me"]["login"] == "frank"


async def test_only_admins_sign_others_out(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    refused = await gql(
        client, SIGN_OUT, {"input": {"principalId": gid("fiona")}}, token=people["frank"]
    )
    assert refused.ok()["signOutEverywhere"]["code"] == "FORBIDDEN"
    assert (await gql(client, ME, token=people["fiona"])).ok()["me"]["login"] == "fiona"
    frozen_clock.advance(timedelta(seconds=1))
    done = await gql(
        client, SIGN_OUT, {"input": {"principalId": gid("fiona")}}, token=people["ada"]
    )
    assert done.ok()["signOutEverywhere"]["__typename"] == "SignOutEverywhereSuccess"
    assert (await gql(client, ME, token=people["fiona"])).status == 401


async def test_deactivation_returns_held_slots_to_the_pool(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-2026-0042", w.EXPENSE
    )
    run_id = started["run"]["id"]
    review = await w.slot_named(client, people["fiona"], "finance_review")
    assert (await w.claim(client, people["fiona"], review["id"]))["__typename"] == "SlotSuccess"
    frozen_clock.advance(timedelta(minutes=10))

    await gql(client, DEACTIVATE, {"id": gid("fiona")}, token=people["ada"])

    again = await w.slot_named(client, people["frank"], "finance_review")
    assert (again["status"], again["holder"]) == ("OPEN", None)
    lines = await w.timeline(client, people["ada"], run_id, kinds=["slot.released"])
    assert len(lines) == 1
    assert lines[0]["actor"] == "ada"
    assert "fiona was deactivated" in lines[0]["reason"]
    assert lines[0]["details"]["previous_holder"] == "fiona"
    # The pool takes it back at once: another candidate claims it.
    assert (await w.claim(client, people["frank"], again["id"]))["__typename"] == "SlotSuccess"


async def test_deactivating_through_an_update_also_returns_held_slots(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-7", w.EXPENSE)
    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"])
    update = {"login": "fiona", "displayName": "Fiona", "roles": ["finance"], "active": False}
    done = (await gql(client, UPSERT, {"input": update}, token=people["ada"])).ok()
    assert done["upsertPrincipal"]["principal"]["active"] is False
    again = await w.slot_named(client, people["frank"], "finance_review")
    assert (again["status"], again["holder"]) == ("OPEN", None)
    assert (await gql(client, ME, token=people["fiona"])).status == 401
