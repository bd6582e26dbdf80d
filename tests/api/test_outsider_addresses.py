"""An outsider's address is exactly one address: at startRun, updateSubject, and at send.

The vendor onboarding example mails ``who.email(subject.contact_email)`` and sends
it links; a contact_email with CR/LF, a list or a display name would reach several
people or inject headers (docs/security.md, "Outsiders' e-mail addresses").
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from taskflow.service.delivery import mail
from tests import smtp_server
from tests.api import magic as m
from tests.api import test_mail_delivery as mails
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.reminders import Reminded
from tests.conftest import gql
from tests.smtp_server import Inbox

pytestmark = pytest.mark.anyio

smtp = mails.smtp
inbox = mails.inbox
settings = mails.settings

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on Refusal { code message } ... on InvalidInput { field } } }"""
UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) {
  __typename ... on Refusal { code message } ... on InvalidInput { field } } }"""
UPSERT = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on Refusal { code message } ... on InvalidInput { field } } }"""
SUBJECT = """query($type: String!, $id: String!) { runs(first: 10, filter: {subject:
  {type: $type, externalId: $id}}) { edges { node { id } } } }"""

BAD = [
    "onboarding@acme.example\r\nBcc: thief@evil.example",
    "onboarding@acme.example\nX-Injected: 1",
    "a@acme.example, b@evil.example",
    "a@acme.example,b@evil.example",
    "Anna <onboarding@acme.example>",
    "",
    "onboarding.acme.example",
    "anna acme@acme.example",
    " onboarding@acme.example",
]


async def start(client: httpx.AsyncClient, token: str, key: str, **attrs: Any) -> dict[str, Any]:
    variables = {
        "input": {
            "workflow": "vendor-onboarding",
            "subject": {"type": "vendor", "externalId": key, "attributes": {**m.VENDOR, **attrs}},
        }
    }
    return dict((await gql(client, START, variables, token=token)).ok()["startRun"])


@pytest.mark.parametrize("address", BAD)
async def test_start_run_refuses_anything_but_one_address_and_starts_nothing(
    world: World, address: str
) -> None:
    client, people = world.client, world.people
    refused = await start(client, people["app"], "V-BAD", contact_email=address)
    assert refused["__typename"] == "InvalidInput", refused
    assert refused["code"] == "INVALID_INPUT"
    assert refused["field"] == "subject.attributes.contact_email"
    assert "exactly one" in refused["message"]
    found = await gql(client, SUBJECT, {"type": "vendor", "id": "V-BAD"}, token=people["ada"])
    assert found.ok()["runs"]["edges"] == []


async def test_an_idna_domain_is_one_address_and_other_attributes_are_not_addresses(
    world: World,
) -> None:
    client, people = world.client, world.people
    ok = await start(
        client,
        people["app"],
        "V-IDN",
        contact_email="anna@bücher.example",
        legal_name="Acme, a@b GmbH",
    )
    assert ok["__typename"] == "StartRunSuccess", ok


async def test_update_subject_refuses_a_bad_address_and_changes_nothing(world: World) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people)
    for address in ("a@acme.example, b@evil.example", "x@acme.example\r\nBcc: y@evil.example"):
        variables = {
            "input": {
                "type": "vendor",
                "externalId": "V-20931",
                "attributes": {**m.VENDOR, "contact_email": address},
            }
        }
        refused = (await gql(client, UPDATE, variables, token=people["app"])).ok()
        assert refused["updateSubject"]["__typename"] == "InvalidInput", refused
        assert refused["updateSubject"]["field"] == "attributes.contact_email"
    subject = await gql(
        client,
        "query($id: ID!) { run(id: $id) { subject { attributes } } }",
        {"id": run["id"]},
        token=people["ada"],
    )
    assert (
        subject.ok()["run"]["subject"]["attributes"]["contact_email"] == m.VENDOR["contact_email"]
    )


async def test_a_minted_links_recipient_and_a_principals_email_are_one_address(
    world: World,
) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    refused = await m.mint(client, people["olga"], upload, email="onboarding@acme.example,x@y.com")
    assert refused["__typename"] == "InvalidInput", refused
    assert refused["message"].startswith("recipient.email ")
    for address in ("Max <max@example.com>", "max@example.com\r\nBcc: x@evil.example"):
        variables = {"input": {"login": "max2", "displayName": "Max", "email": address}}
        answer = (await gql(client, UPSERT, variables, token=people["ada"])).ok()
        assert answer["upsertPrincipal"]["__typename"] == "InvalidInput", answer
        assert answer["upsertPrincipal"]["field"] == "email"


async def test_an_address_stored_before_the_check_is_never_mailed(
    world: World, inbox: Inbox, reminded: Reminded
) -> None:
    client, people, services = world.client, world.people, world.services
    async with services.db.connection() as conn:
        ids = [r["id"] for r in await conn.fetch("SELECT id FROM notification ORDER BY id")]
        bad, idna = ids[-2], ids[-1]
        await conn.execute(
            "UPDATE notification SET recipient_email = $2 WHERE id = $1",
            bad,
            "onboarding@acme.example\r\nBcc: thief@evil.example",
        )
        await conn.execute(
            "UPDATE notification SET recipient_email = $2 WHERE id = $1",
            idna,
            "anna@bücher.example",
        )
    done = await mail.deliver_due(services, mails.mailer_of(services))
    assert (done.taken, done.sent, done.dead) == (2, 1, 1)
    assert len(inbox.messages) == 1
    assert inbox.to("anna@xn--bcher-kva.example")
    assert not inbox.to("thief@evil.example")
    states = await mails.outbox_states(client, people["app"])
    dead = [s for s in states if s[0] == "DEAD"]
    assert len(dead) == 1
    assert "is not exactly one e-mail address" in dead[0][2]
    assert "thief" not in smtp_server.text_of(inbox.messages[0])
    # No link was minted for the refused address (only the one mailed).
    minted = await w.timeline(
        client, people["olga"], (await _run_of(client, people)), ["link.minted"]
    )
    assert len(minted) == 1


async def _run_of(client: httpx.AsyncClient, people: dict[str, str]) -> str:
    found = await gql(client, SUBJECT, {"type": "vendor", "id": "V-20931"}, token=people["ada"])
    return str(found.ok()["runs"]["edges"][0]["node"]["id"])
