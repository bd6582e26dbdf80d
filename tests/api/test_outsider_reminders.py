"""Reminders that reach outsiders (by e-mail) and managers (by attribute), and links they ask.

The vendor onboarding example reminds the vendor's contact every 2 business days
(on de-berlin) with a link requested: the mailer, an integration principal, reads
the outsiders' notifications and mints each link as it sends. Timers fire
through ``run_due(now)`` with a moved clock (T0 is Tuesday 1 December 2026,
09:00 UTC, 10:00 in Berlin).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.reminders import NOTIFICATIONS, VENDOR_ADDRESS, Reminded, at, notifications, step
from tests.api.test_operations import op
from tests.conftest import gql

pytestmark = pytest.mark.anyio

MINT_FOR_NOTIFICATION = """mutation($input: MintNotificationLinkInput!) {
  mintNotificationLink(input: $input) { __typename
  ... on MintNotificationLinkSuccess { url token link { id status recipientEmail recipientName
                                                      createdBy slotId } }
  ... on SlotNotOpen { status }
  ... on Refusal { code message } } }"""

NODE = """query($id: ID!) { node(id: $id) { ... on Notification { id recipient linkId } } }"""


async def mint_for(
    client: httpx.AsyncClient, token: str, notification_id: str, expires_in: int | None = None
) -> dict[str, Any]:
    variables = {"input": {"notificationId": notification_id, "expiresIn": expires_in}}
    result = await gql(client, MINT_FOR_NOTIFICATION, variables, token=token)
    return dict(result.ok()["mintNotificationLink"])


async def test_the_vendors_reminder_reaches_its_address_with_a_link_requested(
    world: World, reminded: Reminded
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    run, uploads, found = reminded
    assert len(found) == 2
    assert {n["slotId"] for n in found} == set(uploads.values())
    for note in found:
        assert note["kind"] == "reminder"
        assert note["recipient"] == f"email:{VENDOR_ADDRESS}"
        assert note["recipientKind"] == "OUTSIDER"
        assert note["recipientEmail"] == VENDOR_ADDRESS
        assert note["recipientName"] == "Anna Acme"  # who.email(..., name=subject.contact_name)
        assert note["linkRequested"] is True
        assert note["linkId"] is None
        assert note["runId"] == run["id"]
        assert note["message"].startswith("Upload ")
        # In Berlin office hours: quiet hours (the workflow's calendar) hold nothing back.
        assert note["deliverAt"] == note["createdAt"] == at(3, 9).isoformat()
        assert note["details"]["deferred"] is False

    # The whole outbox holds the same; staff (even a lead) read only their own.
    everyone = await notifications(client, people["app"], "EVERYONE")
    assert [n["id"] for n in everyone] == [n["id"] for n in found]
    assert await notifications(client, people["olga"]) == []
    assert await notifications(client, people["app"]) == []  # the app itself got none
    refused = await gql(
        client, NOTIFICATIONS, {"filter": {"recipients": "OUTSIDERS"}}, token=people["olga"]
    )
    assert refused.error_codes == ["FORBIDDEN"]
    assert "Only applications" in refused.errors[0]["message"]

    # node(id:): the integration sees it; a principal who is not its recipient does not.
    seen = (await gql(client, NODE, {"id": found[0]["id"]}, token=people["app"])).ok()
    assert seen["node"]["recipient"] == f"email:{VENDOR_ADDRESS}"
    hidden = (await gql(client, NODE, {"id": found[0]["id"]}, token=people["olga"])).ok()
    assert hidden["node"] is None

    # The timeline names the outsider among the recipients.
    sent = await w.timeline(client, people["olga"], run["id"], ["notification.sent"])
    assert [line["details"]["recipients"] for line in sent] == [
        [f"email:{VENDOR_ADDRESS}"],
        [f"email:{VENDOR_ADDRESS}"],
    ]

    # Two business days later the reminders repeat: two more, for the same address.
    assert await step(services, frozen_clock, at(7, 9)) == 2
    assert len(await notifications(client, people["app"], "OUTSIDERS")) == 4


async def test_the_mailer_mints_the_requested_link_and_the_vendor_completes_the_slot(
    world: World, reminded: Reminded
) -> None:
    client, people = world.client, world.people
    run, uploads, _ = reminded
    note = reminded.note_for("bank details")

    # Staff may not mint it: the link request is for the sender (an integration).
    for who in ("olga", "fiona"):
        refused = await mint_for(client, people[who], note["id"])
        assert refused["__typename"] == "NotAllowed", refused
        assert refused["code"] == "FORBIDDEN"

    minted = await mint_for(client, people["app"], note["id"], expires_in=3 * 86400)
    assert minted["__typename"] == "MintNotificationLinkSuccess", minted
    link = minted["link"]
    assert (link["status"], link["recipientEmail"], link["recipientName"]) == (
        "ACTIVE",
        VENDOR_ADDRESS,
        "Anna Acme",
    )
    assert (link["createdBy"], link["slotId"]) == ("app", uploads["bank details"])
    assert minted["url"].startswith("http://taskflow.test/l/")

    # The outbox remembers which link it was, never its URL.
    [again] = [
        n for n in await notifications(client, people["app"], "OUTSIDERS") if n["id"] == note["id"]
    ]
    assert again["linkId"] == link["id"]
    assert minted["token"] not in str(again)

    # The link works: GET shows the form, POST completes the slot.
    page = await client.get(m.path_of(minted["url"]))
    assert page.status_code == 200
    assert "Upload bank details for Acme Logistics GmbH" in page.text
    assert "Anna Acme" in page.text
    done = await m.submit(client, minted["url"], {}, files=m.pdf())
    assert done.status_code == 200
    assert "Thank you" in done.text
    slot = await m.slot_links(client, people["olga"], uploads["bank details"])
    assert slot["status"] == "SATISFIED"
    assert slot["satisfiedBy"] == f"email:{VENDOR_ADDRESS}"

    # Minted for the reminder, by the mailer, for the vendor: on the timeline.
    [line] = await w.timeline(client, people["olga"], run["id"], ["link.minted"])
    assert line["actor"] == "app"
    assert line["reason"] == f"link for {VENDOR_ADDRESS}"
    assert line["details"]["notification"] == int(relay.from_global_id(note["id"])[1])
    assert line["details"]["reminder"] == note["message"]
    assert line["details"]["recipient_name"] == "Anna Acme"

    # The slot is done: its reminder's link can no longer be minted.
    late = await mint_for(client, people["app"], note["id"])
    assert late["__typename"] == "SlotNotOpen", late
    assert late["status"] == "satisfied"


async def test_minting_again_revokes_the_link_minted_before_for_the_same_reminder(
    world: World, reminded: Reminded
) -> None:
    client, people = world.client, world.people
    run, uploads, found = reminded
    note = reminded.note_for("certificate of incorporation")
    first = await mint_for(client, people["app"], note["id"])
    # The help desk's grants name only support tickets: the vendor's outbox is not its.
    outside = await mint_for(client, people["helpdesk"], note["id"])
    assert outside["__typename"] == "NotFoundRefusal"
    second = await mint_for(client, people["ada"], note["id"])  # another sender (an admin)
    assert first["__typename"] == second["__typename"] == "MintNotificationLinkSuccess"

    gone = await client.get(m.path_of(first["url"]))
    assert gone.status_code == 410
    assert "This link can no longer be used" in gone.text
    assert (await client.get(m.path_of(second["url"]))).status_code == 200

    listed = await m.slot_links(client, people["olga"], uploads["certificate of incorporation"])
    statuses = {k["id"]: k["status"] for k in listed["links"]}
    assert statuses == {first["link"]["id"]: "REVOKED", second["link"]["id"]: "ACTIVE"}
    revoked = await w.timeline(client, people["olga"], run["id"], ["link.revoked"])
    assert [(r["actor"], r["details"]["link"]) for r in revoked] == [
        ("ada", relay.from_global_id(first["link"]["id"])[1])
    ]
    assert "replaced by a new one" in revoked[0]["reason"]

    # A link for the other document's reminder is another notification's: untouched.
    other = next(n for n in found if n["id"] != note["id"])
    third = await mint_for(client, people["app"], other["id"])
    assert third["__typename"] == "MintNotificationLinkSuccess"
    assert (await client.get(m.path_of(second["url"]))).status_code == 200


async def test_a_notification_that_requests_no_link_is_refused_one(world: World) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    await m.start_vendor(client, people)
    # 10 business days on, the upload breach notifies procurement (principals): no link.
    await step(services, frozen_clock, at(15, 12))
    mine = await notifications(client, people["olga"])
    breach = [n for n in mine if n["message"].startswith("Upload ")]
    assert breach, mine
    assert all(n["recipientKind"] == "PRINCIPAL" and not n["linkRequested"] for n in breach)
    assert breach[0]["recipientEmail"] == "olga@example.com"
    assert breach[0]["recipientName"] == "Olga Onboarding"
    refused = await mint_for(client, people["app"], breach[0]["id"])
    assert refused["__typename"] == "LinkNotRequested", refused
    assert refused["code"] == "LINK_NOT_REQUESTED"
    assert "with_link=True" in refused["message"]

    missing = await mint_for(client, people["app"], relay.to_global_id("Notification", "999999"))
    assert missing["__typename"] == "NotFoundRefusal"
    wrong_type = await mint_for(
        client, people["app"], relay.to_global_id("Run", "00000000-0000-0000-0000-000000000001")
    )
    assert wrong_type["__typename"] == "NotFoundRefusal"
    malformed = await mint_for(client, people["app"], relay.to_global_id("Run", "1"))
    assert malformed["__typename"] == "InvalidInput"


async def test_a_reminder_to_an_attribute_audience_reaches_the_manager(world: World) -> None:
    """Expense approval: the manager is whoever's "reports" attribute lists the submitter."""
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    started = await w.start(client, people["app"], "expense-approval", "expense", "E-1", w.EXPENSE)
    review = await w.slot_named(client, people["fiona"], "finance_review")
    await w.claim(client, people["fiona"], review["id"])
    done = await w.complete(client, people["fiona"], review["id"], {"decision": "approve"})
    assert done["run"]["state"] == "manager_approval"

    # Half of 3 business days (uk-london, 8h30 a day) is 12h45: Wednesday 13:15.
    assert await step(services, frozen_clock, at(2, 13, 14)) == 0
    assert await step(services, frozen_clock, at(2, 13, 15)) == 1
    [reminded] = await notifications(client, people["max"])
    assert reminded["message"].startswith("Approve EXP-2026-0042 by sam")
    assert reminded["recipientKind"] == "PRINCIPAL"
    assert reminded["recipientEmail"] == "max@example.com"
    # The submitter is excluded from the audience; others have no such attribute value.
    for other in ("sam", "sid", "fiona", "leah"):
        assert await notifications(client, people[other]) == [], other
    [sent] = await w.timeline(client, people["max"], started["run"]["id"], ["notification.sent"])
    assert sent["details"]["recipients"] == ["max"]


async def test_the_mailer_operations(world: World, reminded: Reminded) -> None:
    """graphql/operations/outbox_page.graphql and mint_notification_link.graphql, as a mailer."""
    client, people = world.client, world.people
    first = (await op(client, "outbox_page", people["app"], first=1))["notifications"]
    assert first["totalCount"] is None  # the outbox-wide listing is not counted
    assert first["pageInfo"]["hasNextPage"] is True
    rest = await op(client, "outbox_page", people["app"], after=first["pageInfo"]["endCursor"])
    pages = [*first["edges"], *rest["notifications"]["edges"]]
    assert [e["node"]["recipientKind"] for e in pages] == ["OUTSIDER", "OUTSIDER"]
    assert rest["notifications"]["pageInfo"]["hasNextPage"] is False
    for edge in pages:
        sent = await op(
            client,
            "mint_notification_link",
            people["app"],
            input={"notificationId": edge["node"]["id"]},
        )
        minted = sent["mintNotificationLink"]
        assert minted["__typename"] == "MintNotificationLinkSuccess", minted
        assert minted["link"]["recipientName"] == "Anna Acme"


async def test_two_sends_at_once_leave_one_live_link(world: World, reminded: Reminded) -> None:
    """The notification's row lock makes concurrent mints take turns; each revokes the last."""
    client, people = world.client, world.people
    _, _, found = reminded
    note = found[0]
    answers = await asyncio.gather(*(mint_for(client, people["app"], note["id"]) for _ in range(4)))
    assert {a["__typename"] for a in answers} == {"MintNotificationLinkSuccess"}
    listed = await m.slot_links(client, people["olga"], note["slotId"])
    assert sorted(k["status"] for k in listed["links"]) == [
        "ACTIVE",
        "REVOKED",
        "REVOKED",
        "REVOKED",
    ]
    usable = [a for a in answers if (await client.get(m.path_of(a["url"]))).status_code == 200]
    assert len(usable) == 1
