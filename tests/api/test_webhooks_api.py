"""Webhooks over HTTP: endpoints managed in GraphQL, a real receiver verifying every delivery.

The receiver (tests/webhook_receiver.py) is uvicorn on loopback and checks each
request with ``standardwebhooks.Webhook(secret).verify``. Deliveries are sent by
the worker's sender stepped with the frozen clock: time moves only by ``advance``.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.config import config
from taskflow.config.webhook_settings import WebhookSettings
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import asgi_client, gql, with_settings
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

ENDPOINT_FIELDS = """id url enabled eventTypes workflows secret failingSince disabledReason
    previousSecretValidUntil"""
REFUSAL = "... on Refusal { code message }"


def _endpoint_mutation(field: str) -> str:
    """The mutation ``field`` (its input type is the field's name capitalised, plus
    ``Input``), answering the endpoint's fields or a refusal."""
    return f"""mutation($input: {field[0].upper()}{field[1:]}Input!) {{
  {field}(input: $input) {{
    __typename ... on WebhookEndpointSuccess {{ endpoint {{ {ENDPOINT_FIELDS} }} }} {REFUSAL}
  }} }}"""


CREATE = _endpoint_mutation("createWebhookEndpoint")
UPDATE = _endpoint_mutation("updateWebhookEndpoint")
ROTATE = _endpoint_mutation("rotateWebhookSecret")
DELETE = f"""mutation($input: DeleteWebhookEndpointInput!) {{
  deleteWebhookEndpoint(input: $input) {{
    __typename ... on WebhookEndpointDeleted {{ endpointId }} {REFUSAL}
  }} }}"""
REPLAY = f"""mutation($input: ReplayWebhookDeliveriesInput!) {{
  replayWebhookDeliveries(input: $input) {{
    __typename ... on WebhookDeliveriesReplayed {{ count }} {REFUSAL}
  }} }}"""
ATTENTION = """query { needsAttention(first: 50) { edges { node {
  reason workflow detail remedy } } } }"""
LIST = f"query {{ webhookEndpoints {{ {ENDPOINT_FIELDS} }} }}"
LOG = """query($id: ID!, $state: WebhookDeliveryState) { node(id: $id) {
  ... on WebhookEndpoint { deliveries(first: 100, state: $state) { totalCount edges { node {
    id eventId eventType state attempts lastStatusCode lastError latencyMs nextAttemptAt
    deliveredAt runId } } } } } }"""


@pytest.fixture
def settings(settings: config.Settings) -> config.Settings:
    """Private addresses allowed (plain http to them too): the receiver is on 127.0.0.1."""
    hooks = WebhookSettings(allow_private=True, concurrency=8)
    return dataclasses.replace(settings, webhooks=hooks)


async def create(client: httpx.AsyncClient, token: str, url: str, **extra: Any) -> dict[str, Any]:
    answer = await gql(client, CREATE, {"input": {"url": url, **extra}}, token=token)
    found: dict[str, Any] = answer.ok()["createWebhookEndpoint"]
    return found


async def listening(client: httpx.AsyncClient, token: str, receiver: Receiver, **extra: Any) -> str:
    """An endpoint at ``receiver`` made as ``token`` (``extra``: its filters) whose secret the
    receiver verifies with; the endpoint's id."""
    made = await create(client, token, receiver.url, **extra)
    receiver.secrets.append(made["endpoint"]["secret"])
    return str(made["endpoint"]["id"])


async def drain(sender: webhook_delivery.Sender, now: clock.FrozenClock) -> int:
    """Step the sender until nothing is due now; how many deliveries were taken."""
    total = 0
    while taken := await sender.step(now.now()):
        total += taken
    return total


async def deliveries(client: httpx.AsyncClient, token: str, endpoint: str) -> list[dict[str, Any]]:
    data = (await gql(client, LOG, {"id": endpoint}, token=token)).ok()
    return [e["node"] for e in data["node"]["deliveries"]["edges"]]


# -- managing endpoints --------------------------------------------------------------------------


async def test_endpoints_are_managed_by_admins_and_leads_of_their_workflows(
    world: World, receiver: Receiver
) -> None:
    client, people = world.client, world.people
    everything = await create(client, people["ada"], receiver.url)
    assert everything["__typename"] == "WebhookEndpointSuccess"
    ada_endpoint = everything["endpoint"]
    assert ada_endpoint["secret"].startswith("whsec_")
    assert (ada_endpoint["workflows"], ada_endpoint["eventTypes"]) == ([], [])

    mine = await create(client, people["leah"], receiver.url, workflows=["expense-approval"])
    assert mine["__typename"] == "WebhookEndpointSuccess"
    leah_endpoint = mine["endpoint"]
    # A lead reaches only the workflows granted, and never "every workflow".
    for workflows in (["support-ticket"], [], ["expense-approval", "support-ticket"]):
        refused = await create(client, people["leah"], receiver.url, workflows=workflows)
        assert refused["code"] == "FORBIDDEN", workflows
    # A team lead's grant does not cover the whole workflow: events would tell of other teams.
    team = await create(client, people["tara"], receiver.url, workflows=["support-ticket"])
    assert team["code"] == "FORBIDDEN"
    # Staff without grants may not even list them.
    assert (await gql(client, LIST, token=people["fiona"])).error_codes == ["FORBIDDEN"]

    listed = (await gql(client, LIST, token=people["leah"])).ok()["webhookEndpoints"]
    assert [e["id"] for e in listed] == [leah_endpoint["id"]]
    by_ada = (await gql(client, LIST, token=people["ada"])).ok()["webhookEndpoints"]
    assert {e["id"] for e in by_ada} == {leah_endpoint["id"], ada_endpoint["id"]}
    # Someone else's endpoint is as absent as one that never existed.
    node = await gql(client, LOG, {"id": ada_endpoint["id"]}, token=people["leah"])
    assert node.ok()["node"] is None
    for query, extra in ((UPDATE, {"enabled": False}), (ROTATE, {}), (DELETE, {})):
        answer = await gql(
            client,
            query,
            {"input": {"endpointId": ada_endpoint["id"], **extra}},
            token=people["leah"],
        )
        assert next(iter(answer.ok().values()))["code"] == "NOT_FOUND"

    # Rotation: a new secret signs, the previous one too for a while.
    rotated = await gql(
        client, ROTATE, {"input": {"endpointId": leah_endpoint["id"]}}, token=people["leah"]
    )
    after = rotated.ok()["rotateWebhookSecret"]["endpoint"]
    assert after["secret"] != leah_endpoint["secret"]
    assert after["previousSecretValidUntil"] is not None
    gone = await gql(
        client, DELETE, {"input": {"endpointId": leah_endpoint["id"]}}, token=people["leah"]
    )
    assert gone.ok()["deleteWebhookEndpoint"]["endpointId"] == leah_endpoint["id"]
    assert (await gql(client, LIST, token=people["leah"])).ok()["webhookEndpoints"] == []


async def test_endpoints_on_private_addresses_or_plain_http_are_refused_by_default(
    services: container.Services, people: dict[str, str]
) -> None:
    strict = with_settings(services, webhooks=WebhookSettings())
    async with asgi_client(strict) as client:
        cases = {
            "http://93.184.215.14/hooks": "https",
            "https://127.0.0.1/hooks": "loopback",
            "https://[::1]/hooks": "loopback",
            "https://169.254.169.254/latest": "link-local",
            "https://10.1.2.3/hooks": "private",
            "https://192.168.0.7/hooks": "private",
            "ftp://example.com/": "no absolute http(s) URL",
            "https://user:pw@example.com/": "password",
        }
        for url, said in cases.items():
            refused = await create(client, people["ada"], url)
            assert refused["code"] == "INVALID_INPUT", url
            assert said in refused["message"], (url, refused["message"])
        unknown = await create(
            client, people["ada"], "https://8.8.8.8/", eventTypes=["run.exploded"]
        )
        assert unknown["code"] == "INVALID_INPUT"
        assert "run.started" in unknown["message"]  # names the catalog


# -- delivering ----------------------------------------------------------------------------------


async def expense_to_paid(client: httpx.AsyncClient, people: dict[str, str]) -> str:
    """The expense example from submitted to paid over GraphQL; the run's global id."""
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE
    )
    run_id: str = started["run"]["id"]
    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"], review["version"])
    await w.complete(client, people["fiona"], review["id"], {"decision": "approve"})
    approval = await w.slot_named(client, people["max"], "manager_approval")
    await w.complete(client, people["max"], approval["id"], {"decision": "approve"})
    payment = await w.slot_named(client, people["paul"], "payment")
    await w.complete(
        client,
        people["paul"],
        payment["id"],
        {"payment_reference": "PAYREF-77", "paid_on": "2026-12-02"},
    )
    return run_id


async def test_a_scripted_run_reaches_the_receiver_verified_in_order_as_documented(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    endpoint = await listening(client, people["leah"], receiver, workflows=["expense-approval"])
    run_id = await expense_to_paid(client, people)
    assert await drain(sender, frozen_clock) > 0

    assert all(r.verified for r in receiver.received), "every delivery verifies"
    assert len(set(receiver.ids())) == len(receiver.ids()), "each event once"
    assert receiver.types_of(run_id) == [
        "run.started",
        "slot.opened",
        "slot.claimed",
        "clock.met",  # finance_review's "assigned" milestone, met by the claim
        "slot.completed",
        "clock.met",  # ... and its "finished" one
        "run.state_changed",
        "slot.opened",
        "slot.completed",
        "clock.met",
        "run.state_changed",
        "slot.opened",
        "slot.completed",
        "clock.met",
        "run.state_changed",
        "run.ended",
    ]
    events = [p for p in receiver.verified() if p["data"]["run"]["id"] == run_id]
    started = events[0]
    assert started["timestamp"] == started["data"]["occurredAt"]
    assert started["data"] == {
        "schemaVersion": 1,
        "eventId": receiver.ids()[0],
        "occurredAt": started["data"]["occurredAt"],
        "workflow": {"name": "expense-approval", "version": 1},
        "run": {"id": run_id},
        "subject": {"type": "expense", "externalId": "EXP-1"},
        "slot": None,
        "actor": "app",
    }
    claimed = events[2]["data"]
    assert claimed["slot"]["name"] == "finance_review"
    assert relay.from_global_id(claimed["slot"]["id"])[0] == "Slot"
    assert claimed["holder"] == "fiona"
    assert events[4]["data"]["by"] == "fiona"
    assert events[3]["data"]["milestone"] == "assigned"
    assert events[5]["data"]["milestone"] == "finished"
    assert events[6]["data"]["from"] == "submitted"
    assert events[6]["data"]["to"] == "manager_approval"
    assert events[-1]["data"]["outcome"] == "completed"
    # Never what a definition does not share: no slot payload travels.
    assert all("PAYREF-77" not in r.body for r in receiver.received)

    log = await deliveries(client, people["leah"], endpoint)
    assert {d["state"] for d in log} == {"DELIVERED"}
    assert all(d["attempts"] == 1 and d["lastStatusCode"] == 204 for d in log)


async def test_no_event_is_written_while_no_endpoint_is_enabled(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock, services = world.client, world.people, world.clock, world.services
    await expense_to_paid(client, people)
    async with services.db.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM outbox_event") == 0
    await listening(client, people["ada"], receiver, eventTypes=["run.started"])
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-2", w.EXPENSE)
    await drain(sender, frozen_clock)
    assert [p["type"] for p in receiver.verified()] == ["run.started"]
    assert receiver.verified()[0]["data"]["subject"]["externalId"] == "EXP-2"


async def test_a_receiver_down_then_up_gets_each_event_once_after_retries(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    endpoint = await listening(client, people["ada"], receiver, workflows=["expense-approval"])
    receiver.stop()
    run_id = await expense_to_paid(client, people)
    # Down: each run's first event is tried, fails, and holds the later ones back (order).
    assert await drain(sender, frozen_clock) == 1
    log = await deliveries(client, people["ada"], endpoint)
    first = [d for d in log if d["attempts"] == 1]
    assert len(first) == 1
    assert first[0]["state"] == "PENDING"
    assert first[0]["lastStatusCode"] is None
    assert "Connect" in first[0]["lastError"]
    assert first[0]["nextAttemptAt"] is not None
    # The first backoff is 5 s, jittered over its upper half: 2.5 s with no jitter.
    frozen_clock.advance(timedelta(seconds=2))
    assert await drain(sender, frozen_clock) == 0
    frozen_clock.advance(timedelta(seconds=1))
    assert await drain(sender, frozen_clock) == 1  # tried again, still down

    receiver.start()  # up again, same port
    frozen_clock.advance(timedelta(seconds=11))
    await drain(sender, frozen_clock)
    assert receiver.types_of(run_id)[0] == "run.started"
    assert len(receiver.types_of(run_id)) == 16
    assert len(set(receiver.ids())) == len(receiver.ids()) == 16
    log = await deliveries(client, people["ada"], endpoint)
    assert {d["state"] for d in log} == {"DELIVERED"}
    assert max(d["attempts"] for d in log) == 3


async def test_retry_after_is_honoured_a_final_answer_is_dead_and_replay_sends_again(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    endpoint = await listening(client, people["ada"], receiver, eventTypes=["run.started"])
    receiver.answer(429, retry_after="120")
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-3", w.EXPENSE)
    await drain(sender, frozen_clock)
    (pending,) = await deliveries(client, people["ada"], endpoint)
    assert (pending["state"], pending["lastStatusCode"]) == ("PENDING", 429)
    frozen_clock.advance(timedelta(seconds=119))
    assert await drain(sender, frozen_clock) == 0  # the receiver asked for two minutes
    receiver.answer(410)  # gone: a final answer
    frozen_clock.advance(timedelta(seconds=1))
    assert await drain(sender, frozen_clock) == 1
    (dead,) = await deliveries(client, people["ada"], endpoint)
    assert (dead["state"], dead["lastStatusCode"], dead["nextAttemptAt"]) == ("DEAD", 410, None)

    receiver.answer(200)
    replayed = await gql(
        client,
        REPLAY,
        {"input": {"endpointId": endpoint, "deliveryId": dead["id"]}},
        token=people["ada"],
    )
    assert replayed.ok()["replayWebhookDeliveries"]["count"] == 1
    await drain(sender, frozen_clock)
    (done,) = await deliveries(client, people["ada"], endpoint)
    assert done["state"] == "DELIVERED"
    assert receiver.ids() == [dead["eventId"]] * 3  # one webhook-id across retries and replay
    # A time range replays too; a request naming neither is refused.
    everything = await gql(
        client,
        REPLAY,
        {"input": {"endpointId": endpoint, "from": "2020-01-01T00:00:00Z"}},
        token=people["ada"],
    )
    assert everything.ok()["replayWebhookDeliveries"]["count"] == 1
    neither = await gql(client, REPLAY, {"input": {"endpointId": endpoint}}, token=people["ada"])
    assert neither.ok()["replayWebhookDeliveries"]["code"] == "INVALID_INPUT"


async def test_a_rotated_secret_and_the_previous_one_both_verify_during_the_rotation(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    made = await create(client, people["ada"], receiver.url, eventTypes=["run.started"])
    endpoint, old = made["endpoint"]["id"], made["endpoint"]["secret"]
    rotated = await gql(
        client,
        ROTATE,
        {"input": {"endpointId": endpoint, "keepPreviousSeconds": 3600}},
        token=people["ada"],
    )
    new = rotated.ok()["rotateWebhookSecret"]["endpoint"]["secret"]
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-4", w.EXPENSE)
    await drain(sender, frozen_clock)
    (request,) = receiver.received
    assert receiver.verify(request.body, request.headers) is None  # no secret known yet
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        receiver.secrets[:] = [secret]
        assert receiver.verify(request.body, request.headers) is not None
    frozen_clock.advance(timedelta(hours=2))  # the rotation is over: the new secret alone
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-5", w.EXPENSE)
    await drain(sender, frozen_clock)
    assert len(receiver.received[-1].headers["webhook-signature"].split(" ")) == 1


async def test_an_endpoint_failing_too_long_is_disabled_and_dead_past_the_horizon(
    world: World, receiver: Receiver
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    made = await create(client, people["ada"], receiver.url, eventTypes=["run.started"])
    endpoint = made["endpoint"]["id"]
    receiver.answer(503)
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-6", w.EXPENSE)
    short = dataclasses.replace(
        services.settings.webhooks,
        horizon=timedelta(minutes=10),
        disable_after=timedelta(minutes=30),
        backoff_max=60.0,
    )
    quick = with_settings(services, webhooks=short)
    sender = webhook_delivery.Sender(quick, jitter=lambda: 1.0)
    try:
        for _ in range(40):
            await drain(sender, frozen_clock)
            frozen_clock.advance(timedelta(minutes=1))
        (dead,) = await deliveries(client, people["ada"], endpoint)
        assert (dead["state"], dead["lastStatusCode"]) == ("DEAD", 503)
        listed = (await gql(client, LIST, token=people["ada"])).ok()["webhookEndpoints"]
        assert listed[0]["enabled"] is True  # dead before the endpoint failed 30 minutes
        await w.start(client, people["app"], "expense-approval", "expense", "EXP-7", w.EXPENSE)
        for _ in range(40):
            await drain(sender, frozen_clock)
            frozen_clock.advance(timedelta(minutes=1))
        listed = (await gql(client, LIST, token=people["ada"])).ok()["webhookEndpoints"]
        assert listed[0]["enabled"] is False
        assert "every delivery failed since" in listed[0]["disabledReason"]
        attention = await gql(client, ATTENTION, token=people["ada"])
        (item,) = [
            e["node"]
            for e in attention.ok()["needsAttention"]["edges"]
            if e["node"]["reason"] == "WEBHOOK_DISABLED"
        ]
        assert receiver.url in item["detail"]
        assert "updateWebhookEndpoint" in item["remedy"]
        assert item["workflow"] == "expense-approval"
    finally:
        await sender.close()
    # Enabling it again clears the failure record.
    again = await gql(
        client, UPDATE, {"input": {"endpointId": endpoint, "enabled": True}}, token=people["ada"]
    )
    enabled = again.ok()["updateWebhookEndpoint"]["endpoint"]
    assert (enabled["enabled"], enabled["failingSince"], enabled["disabledReason"]) == (
        True,
        None,
        None,
    )


async def test_two_workers_racing_send_each_event_once_in_order_per_run(
    world: World, receiver: Receiver
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    await listening(client, people["ada"], receiver, workflows=["expense-approval"])
    runs = []
    for n in range(6):
        started = await w.start(
            client, people["app"], "expense-approval", "expense", f"RACE-{n}", w.EXPENSE
        )
        runs.append(started["run"]["id"])
    async with services.db.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM webhook_delivery") == 12
    senders = [webhook_delivery.Sender(services, jitter=lambda: 0.0) for _ in range(2)]
    try:

        async def work(sender: webhook_delivery.Sender) -> int:
            return await drain(sender, frozen_clock)

        # Each in a fresh context: no transaction (nor its connection) is shared.
        tasks = [
            asyncio.get_running_loop().create_task(work(s), context=contextvars.Context())
            for s in senders
        ]
        taken = await asyncio.gather(*tasks)
    finally:
        for s in senders:
            await s.close()
    assert sum(taken) == 12
    assert sorted(receiver.ids()) == sorted(set(receiver.ids()))
    for run_id in runs:
        assert receiver.types_of(run_id) == ["run.started", "slot.opened"]


PAGE = """query($id: ID!, $after: String) { node(id: $id) { ... on WebhookEndpoint {
  deliveries(first: 5, after: $after) { totalCount pageInfo { hasNextPage endCursor }
  edges { cursor node { id } } } } } }"""


async def test_the_delivery_log_pages_newest_first_by_its_cursors(
    world: World, receiver: Receiver
) -> None:
    client, people = world.client, world.people
    made = await create(client, people["ada"], receiver.url, workflows=["expense-approval"])
    endpoint = made["endpoint"]["id"]
    await expense_to_paid(client, people)
    seen: list[str] = []
    after = None
    while True:
        data = (await gql(client, PAGE, {"id": endpoint, "after": after}, token=people["ada"])).ok()
        log = data["node"]["deliveries"]
        seen += [e["node"]["id"] for e in log["edges"]]
        if not log["pageInfo"]["hasNextPage"]:
            break
        after = log["pageInfo"]["endCursor"]
        assert after == log["edges"][-1]["cursor"]
    assert len(seen) == len(set(seen)) == log["totalCount"] == 16
    assert seen == [d["id"] for d in await deliveries(client, people["ada"], endpoint)]
