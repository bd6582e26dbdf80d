"""Outside senders take the outbox with a lease and mark what they sent: never one message twice.

The vendor onboarding example reminds the vendor's contact on Thursday 10:00 in
Berlin (two notifications, one per document; see test_outsider_reminders). The
mailer (the example ``app``) lists what is deliverable now, takes a leased batch
(``takeNotifications``), and marks each sent or failed with its lease; a lease
that ran out lets another sender take it, and the first then cannot mark it.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.api.conftest import World
from tests.api.reminders import Reminded, at, remind
from tests.conftest import gql

pytestmark = pytest.mark.anyio

FIELDS = """id deliveryState attempts lastError leaseExpiresAt nextAttemptAt sentAt deliverAt
            recipientEmail"""

DELIVERABLE = f"""query($filter: NotificationFilter) {{
  notifications(first: 100, filter: $filter) {{ edges {{ node {{ {FIELDS} }} }} }} }}"""

TAKE = f"""mutation($input: TakeNotificationsInput!) {{
  takeNotifications(input: $input) {{ __typename
  ... on TakeNotificationsSuccess {{ lease leaseExpiresAt notifications {{ {FIELDS} }} }}
  ... on Refusal {{ code message }} }} }}"""

SENT = f"""mutation($input: MarkNotificationSentInput!) {{
  markNotificationSent(input: $input) {{ __typename
  ... on MarkNotificationSuccess {{ notification {{ {FIELDS} }} }}
  ... on Refusal {{ code message }} }} }}"""

FAILED = f"""mutation($input: MarkNotificationFailedInput!) {{
  markNotificationFailed(input: $input) {{ __typename
  ... on MarkNotificationSuccess {{ notification {{ {FIELDS} }} }}
  ... on Refusal {{ code message }} }} }}"""


async def deliverable(
    client: httpx.AsyncClient, token: str, recipients: str = "EVERYONE"
) -> list[dict[str, Any]]:
    variables = {"filter": {"recipients": recipients, "deliverableNow": True}}
    result = await gql(client, DELIVERABLE, variables, token=token)
    return [e["node"] for e in result.ok()["notifications"]["edges"]]


async def take(
    client: httpx.AsyncClient, token: str, limit: int = 20, lease: int = 300, **more: Any
) -> dict[str, Any]:
    variables = {"input": {"limit": limit, "leaseSeconds": lease, **more}}
    return dict((await gql(client, TAKE, variables, token=token)).ok()["takeNotifications"])


async def mark_sent(
    client: httpx.AsyncClient, token: str, note_id: str, lease: str
) -> dict[str, Any]:
    variables = {"input": {"notificationId": note_id, "lease": lease}}
    return dict((await gql(client, SENT, variables, token=token)).ok()["markNotificationSent"])


async def mark_failed(
    client: httpx.AsyncClient,
    token: str,
    note_id: str,
    lease: str,
    error: str,
    permanent: bool = False,
) -> dict[str, Any]:
    variables = {
        "input": {"notificationId": note_id, "lease": lease, "error": error, "permanent": permanent}
    }
    result = await gql(client, FAILED, variables, token=token)
    return dict(result.ok()["markNotificationFailed"])


async def test_a_sender_takes_a_leased_batch_and_marks_each_sent_failed_or_dead(
    world: World, reminded: Reminded
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    _, _, found = reminded
    app = people["app"]
    now_listed = await deliverable(client, app, "OUTSIDERS")
    assert [n["id"] for n in now_listed] == [n["id"] for n in found]
    assert {n["deliveryState"] for n in now_listed} == {"PENDING"}
    assert all(n["attempts"] == 0 and n["lastError"] is None for n in now_listed)

    first = await take(client, app, limit=1, lease=120)
    assert first["__typename"] == "TakeNotificationsSuccess", first
    [one] = first["notifications"]
    assert (one["deliveryState"], one["attempts"]) == ("SENDING", 1)
    assert one["leaseExpiresAt"] == first["leaseExpiresAt"] == (at(3, 9, 2)).isoformat()
    # Leased: no longer deliverable, and the next take gets the other one, then nothing.
    assert [n["id"] for n in await deliverable(client, app)] == [found[1]["id"]]
    second = await take(client, app)
    [two] = second["notifications"]
    assert two["id"] == found[1]["id"]
    assert second["lease"] != first["lease"]
    assert (await take(client, app))["notifications"] == []

    # Sent: SENT with its instant. A lease cannot mark another lease's notification.
    wrong = await mark_sent(client, app, two["id"], first["lease"])
    assert (wrong["__typename"], wrong["code"]) == ("LeaseLost", "LEASE_LOST")
    sent = await mark_sent(client, app, one["id"], first["lease"])
    assert sent["__typename"] == "MarkNotificationSuccess", sent
    assert sent["notification"]["deliveryState"] == "SENT"
    assert sent["notification"]["sentAt"] == at(3, 9).isoformat()
    assert sent["notification"]["leaseExpiresAt"] is None
    again = await mark_sent(client, app, one["id"], first["lease"])
    assert again["__typename"] == "LeaseLost"  # marked already: nobody marks it twice

    # A temporary failure: FAILED, deliverable again after the first backoff (1 minute).
    failed = await mark_failed(client, app, two["id"], second["lease"], "451 try later")
    assert failed["__typename"] == "MarkNotificationSuccess", failed
    note = failed["notification"]
    assert (note["deliveryState"], note["lastError"]) == ("FAILED", "451 try later")
    assert note["nextAttemptAt"] == at(3, 9, 1).isoformat()
    assert await deliverable(client, app) == []
    assert (await take(client, app))["notifications"] == []
    frozen_clock.set(at(3, 9, 1))
    retried = await take(client, app)
    [two_again] = retried["notifications"]
    assert (two_again["id"], two_again["attempts"]) == (two["id"], 2)

    # A permanent failure: DEAD, never taken again.
    dead = await mark_failed(
        client, app, two["id"], retried["lease"], "550 no such mailbox", permanent=True
    )
    assert dead["notification"]["deliveryState"] == "DEAD"
    assert dead["notification"]["lastError"] == "550 no such mailbox"
    frozen_clock.set(at(9, 9))
    assert (await take(client, app))["notifications"] == []
    listed = await deliverable(client, app)
    assert all(n["id"] not in (one["id"], two["id"]) for n in listed)


async def test_a_lease_that_ran_out_goes_to_the_next_taker_and_the_first_cannot_mark(
    world: World, reminded: Reminded
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    app = people["app"]
    first = await take(client, app, limit=1, lease=60)
    [note] = first["notifications"]
    frozen_clock.set(at(3, 9, 0) + timedelta(seconds=59))
    assert [n["id"] for n in (await take(client, app))["notifications"]] != [note["id"]]
    frozen_clock.set(at(3, 9, 1))
    # The first sender died (or is slow): its lease ran out, so the notification is deliverable.
    assert note["id"] in [n["id"] for n in await deliverable(client, app)]
    second = await take(client, app)
    assert [n["id"] for n in second["notifications"]] == [note["id"]]
    assert second["notifications"][0]["attempts"] == 2
    late = await mark_sent(client, app, note["id"], first["lease"])
    assert late["__typename"] == "LeaseLost", late
    assert "take again" in late["message"]
    done = await mark_sent(client, app, note["id"], second["lease"])
    assert done["notification"]["deliveryState"] == "SENT"


async def test_quiet_hours_hold_a_notification_back_until_its_deliver_at(
    world: World, reminded: Reminded
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    run, _, found = reminded
    app = people["app"]
    taken = await take(client, app)
    assert len(taken["notifications"]) == len(found) == 2
    for note in taken["notifications"]:
        await mark_sent(client, app, note["id"], taken["lease"])
    now = frozen_clock.now()
    late = {"recipient_email": "late@acme.example"}
    await remind(
        services,
        run,
        ("email:late@acme.example", "Tomorrow morning", now + timedelta(hours=20), late),
    )
    assert await deliverable(client, app) == []
    assert (await take(client, app))["notifications"] == []
    frozen_clock.set(now + timedelta(hours=20))
    [late] = (await take(client, app))["notifications"]
    assert late["recipientEmail"] == "late@acme.example"
    assert late["deliverAt"] == (now + timedelta(hours=20)).isoformat()


async def test_concurrent_takers_never_get_the_same_notification(
    world: World, reminded: Reminded
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    run, _, _ = reminded
    now = frozen_clock.now()
    await remind(
        services,
        run,
        *[
            (
                f"email:v{i}@acme.example",
                f"Reminder {i}",
                now,
                {"recipient_email": f"v{i}@acme.example"},
            )
            for i in range(60)
        ],
    )
    app = people["app"]
    seen: list[str] = []
    for _ in range(10):
        # Six senders at once, each on its own pooled connection.
        batches = await asyncio.gather(*(take(client, app, limit=4) for _ in range(6)))
        got = [n["id"] for b in batches for n in b["notifications"]]
        seen.extend(got)
        if not got:
            break
    assert len(seen) == 62
    assert len(set(seen)) == len(seen), "a notification was leased to two takers"


async def test_only_integrations_take_and_mark_and_only_their_workflows(
    world: World, reminded: Reminded
) -> None:
    client, people = world.client, world.people
    for who in ("olga", "max", "sam"):
        refused = await take(client, people[who])
        assert (refused["__typename"], refused["code"]) == ("NotAllowed", "FORBIDDEN"), refused
    # The help desk integration is granted support-ticket only: nothing of vendor onboarding.
    assert (await take(client, people["helpdesk"]))["notifications"] == []
    taken = await take(client, people["app"], recipients="OUTSIDERS")
    note = taken["notifications"][0]
    hidden = await mark_sent(client, people["helpdesk"], note["id"], taken["lease"])
    assert hidden["__typename"] == "NotFoundRefusal", hidden
    staff = await mark_sent(client, people["olga"], note["id"], taken["lease"])
    assert staff["__typename"] == "NotAllowed", staff
    bad = await take(client, people["app"], lease=5)
    assert (bad["__typename"], bad["code"]) == ("InvalidInput", "INVALID_INPUT")
    too_many = await take(client, people["app"], limit=1000)
    assert too_many["__typename"] == "InvalidInput"
    assert (await mark_sent(client, people["app"], note["id"], taken["lease"]))["notification"][
        "deliveryState"
    ] == "SENT"


async def test_a_take_sent_again_with_its_key_answers_the_same_batch(
    world: World, reminded: Reminded
) -> None:
    client, people = world.client, world.people
    app = people["app"]
    first = await take(client, app, limit=1, idempotencyKey="take-1")
    again = await take(client, app, limit=1, idempotencyKey="take-1")
    assert again["lease"] == first["lease"]
    assert [n["id"] for n in again["notifications"]] == [n["id"] for n in first["notifications"]]
    # A new key takes the next one; the same key with other input is refused.
    other = await take(client, app, limit=1, idempotencyKey="take-2")
    assert other["notifications"][0]["id"] != first["notifications"][0]["id"]
    reused = await take(client, app, limit=5, idempotencyKey="take-1")
    assert reused["__typename"] == "IdempotencyKeyReused"
