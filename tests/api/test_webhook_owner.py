"""An endpoint is its owner's: it carries events only while its owner may read them
(docs/security.md, "Who an endpoint belongs to"; docs/delivery.md; docs/access.md).

A lead creates an endpoint for expense-approval; a run's events reach a real receiver
(tests/webhook_receiver.py); an admin then takes the lead's grant away (the principals
API, or a reload of the principals file) or deactivates the lead, and the next events
are not sent: the delivery log says why. The worker's sender is stepped with the frozen
clock, as in tests/api/test_webhooks_api.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.delivery import webhook_delivery
from tests.api import test_webhooks_api as hooks
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import EXAMPLE_PRINCIPALS, gql
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

settings = hooks.settings

UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on Refusal { code message } } }"""
DEACTIVATE = """mutation($id: ID!) { deactivatePrincipal(input: {id: $id}) {
  __typename ... on Refusal { code message } } }"""
NODE = f"""query($id: ID!) {{ node(id: $id) {{ ... on WebhookEndpoint {{
  {hooks.ENDPOINT_FIELDS} createdBy }} }} }}"""


def leah_record() -> dict[str, Any]:
    """Leah as the principals file has her (lead of expense-approval)."""
    people: list[dict[str, Any]] = json.loads(EXAMPLE_PRINCIPALS.read_text())
    return next(p for p in people if p["id"] == "leah")


def leah_input(**change: Any) -> dict[str, Any]:
    """Leah as ``upsertPrincipal`` takes her, with ``change``."""
    record = leah_record()
    return {
        "login": "leah",
        "displayName": record["display_name"],
        "email": record["email"],
        "roles": record["roles"],
        "groups": record["groups"],
        "attributes": record["attributes"],
        "timeZone": record["time_zone"],
        "calendar": record["calendar"],
        **change,
    }


@pytest.fixture
def other_receiver() -> Iterator[Receiver]:
    found = Receiver().start()
    try:
        yield found
    finally:
        found.stop()


async def claim_review(client: httpx.AsyncClient, people: dict[str, str]) -> str:
    """Fiona claims the run's finance review (slot.claimed and clock.met); its id."""
    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"], review["version"])
    found: str = review["id"]
    return found


async def test_a_leads_endpoint_stops_when_the_grant_goes_and_flows_again_when_it_returns(
    world: World, receiver: Receiver, other_receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    endpoint = await hooks.listening(
        client, people["leah"], receiver, workflows=["expense-approval"]
    )
    # An admin's endpoint on the same events: sent in the same batches, whatever Leah's fate.
    admins = await hooks.create(client, people["ada"], other_receiver.url)
    other_receiver.secrets.append(admins["endpoint"]["secret"])
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE
    )
    run_id = started["run"]["id"]
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id) == ["run.started", "slot.opened"]

    # An admin takes the grant away (the principals API: powers [] removes every grant).
    removed = await gql(client, UPSERT, {"input": leah_input(powers=[])}, token=people["ada"])
    assert removed.ok()["upsertPrincipal"]["__typename"] == "UpsertPrincipalSuccess"
    review = await claim_review(client, people)
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id) == ["run.started", "slot.opened"], "nothing more sent"
    assert other_receiver.types_of(run_id)[-2:] == ["slot.claimed", "clock.met"]
    log = await hooks.deliveries(client, people["ada"], endpoint)  # newest first
    skipped = [d for d in log if d["state"] == "SKIPPED"]
    assert [d["eventType"] for d in skipped] == ["clock.met", "slot.claimed"]
    for d in skipped:
        assert d["lastError"].startswith("owner-lost-access: "), d
        assert "'leah'" in d["lastError"]
        assert "'expense-approval'" in d["lastError"]
        assert (d["attempts"], d["lastStatusCode"], d["nextAttemptAt"]) == (0, None, None)
    # Not retried: time passes, nothing is due for them.
    frozen_clock.advance(timedelta(days=4))
    assert await hooks.drain(sender, frozen_clock) == 0
    # Without the grant Leah manages no endpoint, her own included.
    assert (await gql(client, hooks.LIST, token=people["leah"])).error_codes == ["FORBIDDEN"]

    # The grant comes back (an admin reloads the principals file): later events flow again.
    await principal_service.load(services, [leah_record()])
    await w.complete(client, people["fiona"], review, {"decision": "approve"})
    await hooks.drain(sender, frozen_clock)
    flowing = receiver.types_of(run_id)
    assert flowing[:3] == ["run.started", "slot.opened", "slot.completed"]
    assert "slot.claimed" not in flowing
    # The ones skipped meanwhile stay skipped; the owner may replay them (checked again).
    log = await hooks.deliveries(client, people["leah"], endpoint)
    assert sorted(d["eventType"] for d in log if d["state"] == "SKIPPED") == [
        "clock.met",
        "slot.claimed",
    ]
    replayed = await gql(
        client,
        hooks.REPLAY,
        {"input": {"endpointId": endpoint, "deliveryId": skipped[1]["id"]}},
        token=people["leah"],
    )
    assert replayed.ok()["replayWebhookDeliveries"]["count"] == 1
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id)[-1] == "slot.claimed"
    assert all(r.verified for r in receiver.received)


async def test_a_deactivated_owners_endpoint_sends_nothing_and_says_why(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    endpoint = await hooks.listening(
        client, people["leah"], receiver, workflows=["expense-approval"]
    )
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE
    )
    run_id = started["run"]["id"]
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id) == ["run.started", "slot.opened"]

    leah = relay.to_global_id("Principal", "leah")
    gone = await gql(client, DEACTIVATE, {"id": leah}, token=people["ada"])
    assert gone.ok()["deactivatePrincipal"]["__typename"] == "DeactivatePrincipalSuccess"
    review = await claim_review(client, people)
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id) == ["run.started", "slot.opened"], "nothing more sent"
    log = await hooks.deliveries(client, people["ada"], endpoint)
    skipped = [d for d in log if d["state"] == "SKIPPED"]
    assert len(skipped) == 2
    assert all(d["lastError"].startswith("owner-deactivated: ") for d in skipped), skipped

    # Activated again (her grants kept): later events flow; the skipped ones stay skipped.
    back = await gql(client, UPSERT, {"input": leah_input(active=True)}, token=people["ada"])
    assert back.ok()["upsertPrincipal"]["__typename"] == "UpsertPrincipalSuccess"
    await w.complete(client, people["fiona"], review, {"decision": "approve"})
    await hooks.drain(sender, frozen_clock)
    assert receiver.types_of(run_id)[2] == "slot.completed"
    log = await hooks.deliveries(client, people["ada"], endpoint)
    assert sum(d["state"] == "SKIPPED" for d in log) == 2


async def test_an_endpoint_an_admin_created_is_never_a_leads(
    world: World, receiver: Receiver
) -> None:
    client, people = world.client, world.people
    admins = await hooks.create(client, people["ada"], receiver.url, workflows=["expense-approval"])
    theirs = admins["endpoint"]
    mine = await hooks.create(client, people["leah"], receiver.url, workflows=["expense-approval"])
    leah_endpoint = mine["endpoint"]["id"]

    # Not in her listing, though she is granted every workflow it names.
    listed = (await gql(client, hooks.LIST, token=people["leah"])).ok()["webhookEndpoints"]
    assert [e["id"] for e in listed] == [leah_endpoint]
    assert all(e["secret"] != theirs["secret"] for e in listed)
    # Its secret cannot be read by id, nor its delivery log.
    assert (await gql(client, NODE, {"id": theirs["id"]}, token=people["leah"])).ok() == {
        "node": None
    }
    assert (await gql(client, hooks.LOG, {"id": theirs["id"]}, token=people["leah"])).ok() == {
        "node": None
    }
    # No take-over: update, rotate, replay, delete are NOT_FOUND and change nothing.
    for query, extra in (
        (hooks.UPDATE, {"url": receiver.url + "/mine", "enabled": True}),
        (hooks.ROTATE, {}),
        (hooks.REPLAY, {"from": "2020-01-01T00:00:00Z"}),
        (hooks.DELETE, {}),
    ):
        answer = await gql(
            client, query, {"input": {"endpointId": theirs["id"], **extra}}, token=people["leah"]
        )
        refusal = next(iter(answer.ok().values()))
        assert refusal["code"] == "NOT_FOUND", (query, refusal)
    kept = (await gql(client, NODE, {"id": theirs["id"]}, token=people["ada"])).ok()["node"]
    assert (kept["url"], kept["secret"], kept["createdBy"]) == (
        theirs["url"],
        theirs["secret"],
        "ada",
    )
    # The admin sees both, each with its owner.
    by_ada = (await gql(client, hooks.LIST, token=people["ada"])).ok()["webhookEndpoints"]
    assert {e["id"] for e in by_ada} == {theirs["id"], leah_endpoint}
