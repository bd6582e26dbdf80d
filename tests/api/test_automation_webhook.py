"""An automation's webhook action over HTTP: a lead's endpoint (made through GraphQL) gets an
``automation.webhook`` event, signed and sent by the delivery worker as every event is; an
endpoint the author may not manage is not posted to, and the run's timeline says why."""

from __future__ import annotations

from typing import Any

import pytest

from taskflow.service.automations import acting
from taskflow.service.delivery import webhook_delivery
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_automations_api import CREATE, WORKFLOW, call, moved
from tests.api.test_webhooks_api import drain, listening
from tests.api.test_webhooks_api import settings as settings  # loopback allowed
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio


def big_expenses_post_to(endpoint: str) -> dict[str, Any]:
    return {
        "name": "big expenses are posted to the finance hook",
        "trigger": {"on": "slot.opened", "slot": "finance_review"},
        "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
        "actions": [{"do": "webhook", "endpoint": endpoint, "message": "a big one"}],
    }


async def publish(world: World, who: str, document: dict[str, Any]) -> str:
    token = world.people[who]
    made = await call(world.client, token, CREATE, {"workflow": WORKFLOW, "document": document})
    target = {"automationId": made["automation"]["id"]}
    published = await call(world.client, token, moved("publish"), target)
    assert published["__typename"] == "AutomationSuccess", published
    return str(published["automation"]["id"])


async def posting(
    world: World, receiver: Receiver, owner: str, amounts: dict[str, float]
) -> dict[str, str]:
    """Leah's automation posting big expenses to ``owner``'s endpoint at ``receiver``
    (subscribed to run.ended only: what arrives for a run is the automation's post), and a
    run per reference of ``amounts``, decided by the lane; each reference's run id."""
    people = world.people
    endpoint = await listening(
        world.client, people[owner], receiver, workflows=[WORKFLOW], eventTypes=["run.ended"]
    )
    await publish(world, "leah", big_expenses_post_to(endpoint))
    runs = {}
    for ref, amount in amounts.items():
        started = await w.start_expense(world.client, people["app"], ref, amount=amount)
        runs[ref] = str(started["run"]["id"])
    while await acting.run_due(world.services):
        pass
    return runs


async def test_a_webhook_action_reaches_the_endpoint_through_the_delivery_worker(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    runs = await posting(world, receiver, "leah", {"EXP-HOOK-1": 5000.0, "EXP-HOOK-2": 20.0})
    assert await drain(sender, world.clock) == 1

    run_id = runs["EXP-HOOK-1"]
    assert receiver.types_of(run_id) == ["automation.webhook"]
    assert receiver.types_of(runs["EXP-HOOK-2"]) == []
    [posted] = [p for p in receiver.verified() if p["data"]["run"]["id"] == run_id]
    assert posted["data"]["message"] == "a big one"
    assert posted["data"]["actor"] == f"automation:{posted['data']['automation']}"
    assert posted["data"]["subject"] == {"type": "expense", "externalId": "EXP-HOOK-1"}


async def test_an_endpoint_the_author_may_not_manage_is_not_posted_to(
    world: World, receiver: Receiver, sender: webhook_delivery.Sender
) -> None:
    # Ada's endpoint (an admin's): never a lead's, whatever their grants.
    await posting(world, receiver, "ada", {"EXP-HOOK-3": 5000.0})
    assert await drain(sender, world.clock) == 0
    async with world.services.db.connection() as conn:
        why = await conn.fetchval(
            "SELECT details->>'why' FROM audit_event WHERE kind = 'automation.action_skipped'"
        )
    assert why is not None
    assert "the author may manage" in why
