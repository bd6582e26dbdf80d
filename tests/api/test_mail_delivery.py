"""E-mail: the worker mails the outbox to a real SMTP server (aiosmtpd on loopback).

The vendor onboarding example reminds the vendor's contact on Thursday 10:00 in
Berlin (two reminders, one per document, each requesting a magic link). The
worker's mail pass (``mail.deliver_due``) takes them with the outbox lease,
mints each link at send time and mails it; the link in the mail completes the
slot. A 4xx reply is tried again after a backoff, a 5xx reply makes it dead,
and quiet hours hold a notification back until its ``deliverAt``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.config import config, mail_config
from taskflow.service.common import container
from taskflow.service.delivery import mail
from taskflow.worker import loop
from tests import smtp_server
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.reminders import VENDOR_ADDRESS, Reminded, at, notifications, remind, step
from tests.api.test_notification_delivery import DELIVERABLE, deliverable
from tests.conftest import gql
from tests.integration.test_metrics import delta, scrape
from tests.smtp_server import Inbox

pytestmark = pytest.mark.anyio

SENDER = "Taskflow <taskflow@acme-buyer.example>"
REPLY_TO = "procurement@acme-buyer.example"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server.smtp_server() as running:
        yield running


@pytest.fixture
def inbox(smtp: tuple[Inbox, int]) -> Inbox:
    """What the test's SMTP server received."""
    return smtp[0]


@pytest.fixture
def settings(settings: config.Settings, smtp: tuple[Inbox, int], tmp_path: Path) -> config.Settings:
    """The test settings with e-mail on, and a subject line of the vendor workflow's own."""
    folder = tmp_path / "mail-templates"
    (folder / "vendor-onboarding").mkdir(parents=True)
    (folder / "vendor-onboarding" / "reminder.subject.j2").write_text(
        # vat_number is not among the upload slot's shareable fields: an outsider never sees it.
        "{{ subject.legal_name }} - {{ message }} ({{ subject_key }}){{ subject.vat_number }}"
    )
    mail_settings = mail_config.load(
        {
            "TASKFLOW_SMTP_URL": f"smtp://127.0.0.1:{smtp[1]}?starttls=false&timeout=5",
            "TASKFLOW_MAIL_FROM": SENDER,
            "TASKFLOW_MAIL_REPLY_TO": REPLY_TO,
            "TASKFLOW_MAIL_TEMPLATES": str(folder),
        }
    )
    return replace(settings, mail=mail_settings)


def mailer_of(services: container.Services) -> mail.Mailer:
    found = mail.Mailer.of(services)
    assert found is not None
    return found


async def outbox_states(client: httpx.AsyncClient, token: str) -> list[tuple[str, int, str]]:
    """(deliveryState, attempts, lastError) of every outsider's notification, oldest first."""
    variables = {"filter": {"recipients": "OUTSIDERS"}}
    result = (await gql(client, DELIVERABLE, variables, token=token)).ok()
    nodes = [e["node"] for e in result["notifications"]["edges"]]
    return [(n["deliveryState"], n["attempts"], n["lastError"]) for n in nodes]


def link_in(text: str) -> str:
    found = re.search(r"http://taskflow\.test/l/\S+", text)
    assert found, text
    return found.group(0)


async def test_the_vendor_gets_the_reminder_by_mail_and_its_link_completes_the_slot(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services = world.client, world.people, world.services
    run, uploads, found = reminded
    mailer = mailer_of(services)
    done = await mail.deliver_due(services, mailer)
    assert (done.taken, done.sent, done.failed, done.dead) == (2, 2, 0, 0)

    received = inbox.to(VENDOR_ADDRESS)
    assert len(received) == 2
    for message in received:
        assert message["To"] == f"Anna Acme <{VENDOR_ADDRESS}>"
        assert message["From"] == SENDER
        assert message["Reply-To"] == REPLY_TO
        assert message["Subject"].startswith("Acme Logistics GmbH - Upload ")
        assert message["Subject"].endswith("(V-20931)")
        assert message["Auto-Submitted"] == "auto-generated"
        assert message["List-Unsubscribe"] is None  # plain transactional mail
        text, html = smtp_server.text_of(message), smtp_server.html_of(message)
        assert text.startswith("Hello Anna Acme,")
        assert link_in(text) in html
    # Each mail carries its own link; the outbox kept only which link, never the token.
    links = [link_in(smtp_server.text_of(msg)) for msg in received]
    assert len(set(links)) == 2
    sent = await notifications(client, people["app"], "OUTSIDERS")
    assert {n["linkId"] is not None for n in sent} == {True}
    for link in links:
        assert link.rsplit("/", 1)[1] not in str(sent)
    assert await deliverable(client, people["app"]) == []
    assert [s[:2] for s in await outbox_states(client, people["app"])] == [("SENT", 1)] * 2

    # The vendor follows the bank details mail's link: the slot is done.
    bank = next(msg for msg in received if "bank details" in smtp_server.text_of(msg).lower())
    url = link_in(smtp_server.text_of(bank))
    page = await client.get(m.path_of(url))
    assert page.status_code == 200
    assert "Anna Acme" in page.text
    response = await m.submit(client, url, {}, files=m.pdf())
    assert response.status_code == 200
    assert "Thank you" in response.text
    slot = await m.slot_links(client, people["olga"], uploads["bank details"])
    assert slot["status"] == "SATISFIED"
    assert slot["satisfiedBy"] == f"email:{VENDOR_ADDRESS}"

    # The links were minted by taskflow as it sent them: on the run's timeline.
    minted = await w.timeline(client, people["olga"], run["id"], ["link.minted"])
    assert [line["actor"] for line in minted] == ["taskflow", "taskflow"]
    assert {line["details"]["notification"] for line in minted} == {
        int(relay.from_global_id(n["id"])[1]) for n in found
    }
    # Nothing is sent twice.
    assert (await mail.deliver_due(services, mailer)).taken == 0
    assert len(inbox.messages) == 2


async def test_a_busy_server_is_tried_again_after_a_backoff_and_no_link_outlives_a_failure(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    run, _, _ = reminded
    inbox.refuse[VENDOR_ADDRESS] = ["451 4.3.0 Mailbox busy, try later"] * 2
    mailer = mailer_of(services)
    done = await mail.deliver_due(services, mailer)
    assert (done.taken, done.failed) == (2, 2)
    assert inbox.messages == []
    failed = await notifications(client, people["app"], "OUTSIDERS")
    # The failed sends' links rolled back with them: none was minted, none is live.
    assert await w.timeline(client, people["olga"], run["id"], ["link.minted"]) == []
    assert {n["linkId"] for n in failed} == {None}
    assert await deliverable(client, people["app"]) == []
    busy = ("FAILED", 1, "451 4.3.0 Mailbox busy, try later")
    assert await outbox_states(client, people["app"]) == [busy, busy]

    # Not before the backoff (1 minute), then sent.
    assert (await mail.deliver_due(services, mailer)).taken == 0
    frozen_clock.set(at(3, 9, 1))
    again = await mail.deliver_due(services, mailer)
    assert (again.taken, again.sent) == (2, 2)
    assert len(inbox.to(VENDOR_ADDRESS)) == 2
    minted = await w.timeline(client, people["olga"], run["id"], ["link.minted"])
    assert len(minted) == 2
    assert [s[:2] for s in await outbox_states(client, people["app"])] == [("SENT", 2)] * 2


async def test_a_refused_address_is_dead_at_once_and_never_tried_again(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    inbox.refuse[VENDOR_ADDRESS] = ["550 5.1.1 No such mailbox"] * 2
    mailer = mailer_of(services)
    before = await scrape(client)
    done = await mail.deliver_due(services, mailer)
    assert delta(await scrape(client), before, "taskflow_mails_total", outcome="dead") == 2
    assert (done.taken, done.dead) == (2, 2)
    dead = ("DEAD", 1, "550 5.1.1 No such mailbox")
    assert await outbox_states(client, people["app"]) == [dead, dead]
    frozen_clock.set(at(10, 9))
    assert (await mail.deliver_due(services, mailer)).taken == 0
    assert inbox.messages == []


async def test_quiet_hours_hold_a_staff_mail_back_until_deliver_at(
    world: World, smtp: tuple[Inbox, int]
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    inbox, _ = smtp
    run = await m.start_vendor(client, people)
    now = frozen_clock.now()
    olga = {"recipient_email": "olga@example.com", "recipient_name": "Olga"}
    await remind(
        services,
        run,
        ("olga", "The vendor's documents are late", now + timedelta(hours=14), olga),
        # A principal without an address is left to the outbox (GraphQL), not mailed.
        ("app", "No address", now, {}),
    )
    mailer = mailer_of(services)
    assert (await mail.deliver_due(services, mailer)).taken == 0
    frozen_clock.set(now + timedelta(hours=14) - timedelta(seconds=1))
    assert (await mail.deliver_due(services, mailer)).taken == 0
    frozen_clock.set(now + timedelta(hours=14))
    assert (await mail.deliver_due(services, mailer)).sent == 1
    [message] = inbox.messages
    assert message["To"] == "Olga <olga@example.com>"
    assert "The vendor's documents are late" in smtp_server.text_of(message)
    assert "/l/" not in smtp_server.text_of(message)  # no link requested, none sent


async def test_a_server_that_is_down_counts_as_a_temporary_failure(
    world: World, reminded: Reminded
) -> None:
    client, people, services = world.client, world.people, world.services
    assert services.settings.mail is not None
    down = replace(services.settings.mail, port=smtp_server.free_port())
    mailer = mail.Mailer(down, mailer_of(services).templates, mail.SmtpSender(down))
    done = await mail.deliver_due(services, mailer)
    assert (done.taken, done.failed) == (2, 2)
    for state, attempts, error in await outbox_states(client, people["app"]):
        assert (state, attempts) == ("FAILED", 1)
        assert "SMTPConnectError" in error


async def test_a_reminder_for_a_slot_done_meanwhile_is_not_sent(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services = world.client, world.people, world.services
    _, uploads, _ = reminded
    # Procurement hands the vendor a link by hand, and the vendor uses it before the mail goes.
    minted = await m.mint(client, people["olga"], uploads["bank details"])
    response = await m.submit(client, minted["url"], {}, files=m.pdf())
    assert response.status_code == 200
    done = await mail.deliver_due(services, mailer_of(services))
    assert (done.taken, done.sent, done.dead) == (2, 1, 1)
    [message] = inbox.messages
    assert "bank details" not in smtp_server.text_of(message).lower()
    states = sorted(await outbox_states(client, people["app"]))
    assert states[0][:2] == ("DEAD", 1)
    assert states[0][2].startswith("not sent: The slot is satisfied")
    assert states[1][:2] == ("SENT", 1)


async def test_a_running_worker_mails_beside_its_timers(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services = world.client, world.people, world.services
    async with loop.running(services) as worker:
        assert worker.mailer is not None
        for _ in range(200):  # the worker's own pace: wait for the effect, not a deadline
            if len(inbox.messages) == 2:
                break
            await asyncio.sleep(0.05)
    assert len(inbox.to(VENDOR_ADDRESS)) == 2
    assert [s[:2] for s in await outbox_states(client, people["app"])] == [("SENT", 1)] * 2


async def test_the_vendor_is_mailed_that_a_request_expires_with_a_link_that_works(
    world: World, inbox: Inbox
) -> None:
    """Two days before a document request expires, the vendor's mail says so and carries a
    link; the link completes the request in time (the expiry then never fires)."""
    client, people, services = world.client, world.people, world.services
    run = await m.start_vendor(client, people)
    uploads = await m.upload_slots(client, people, run["id"])
    await step(services, world.clock, at(20, 9))
    await mail.deliver_due(services, mailer_of(services))
    expiring = [msg for msg in inbox.to(VENDOR_ADDRESS) if msg["Subject"].startswith("Expiring: ")]
    assert len(expiring) == 2  # one per document still to come
    bank = next(msg for msg in expiring if "bank details" in msg["Subject"].lower())
    assert "expires in 2 days" in bank["Subject"]
    response = await m.submit(client, link_in(smtp_server.text_of(bank)), {}, files=m.pdf())
    assert response.status_code == 200
    slot = await m.slot_links(client, people["olga"], uploads["bank details"])
    assert slot["status"] == "SATISFIED"
