"""Magic links over HTTP: minting, the page, the form, the confirmation, revoking, the timeline."""

from __future__ import annotations

import dataclasses

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.access import principals
from taskflow.service.links import links
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

SAFE_HEADERS = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-robots-tag": "noindex, nofollow",
}


def assert_safe_headers(response: httpx.Response) -> None:
    for name, value in SAFE_HEADERS.items():
        assert response.headers.get(name) == value, (name, response.status_code)


async def test_a_vendor_uploads_a_document_through_the_link(world: World) -> None:
    client, people = world.client, world.people
    link, slot_id, run_id = await m.vendor_link(client, people)
    assert link["url"].startswith("http://taskflow.test/l/")
    assert link["link"]["status"] == "ACTIVE"

    page = await client.get(m.path_of(link["url"]))
    assert page.status_code == 200
    assert_safe_headers(page)
    html = page.text
    assert "Upload bank details for Acme Logistics GmbH" in html
    # The shareable subject fields, and nothing else of the subject.
    assert "V-20931" in html
    assert "DE123456789" not in html
    assert "onboarding@acme.example" not in html
    assert '<label for="f-document">Document <span class="req">(required)</span></label>' in html
    assert '<input id="f-valid_until" name="valid_until" type="date"' in html
    # The box is the browser's date widget in the reader's own date order: the hint names
    # no format of its own (it said YYYY-MM-DD while Chromium showed mm/dd/yyyy).
    assert "Pick the date from the calendar, or type it in the order the box shows." in html
    assert "YYYY-MM-DD" not in html
    assert "<script" not in html

    wrong = await m.submit(client, link["url"], {"document": "", "valid_until": "31/12/2027"})
    assert wrong.status_code == 422
    assert_safe_headers(wrong)
    assert '<p class="error" id="f-document-error">is required</p>' in wrong.text
    assert "expected a date written YYYY-MM-DD" in wrong.text
    assert 'aria-describedby="f-valid_until-hint f-valid_until-error"' in wrong.text
    assert 'value="31/12/2027"' in wrong.text  # what was typed is kept

    done = await m.submit(client, link["url"], {}, files=m.pdf())
    assert done.status_code == 200
    assert_safe_headers(done)
    assert "Thank you" in done.text
    assert "Upload bank details for Acme Logistics GmbH" in done.text

    again = await client.get(m.path_of(link["url"]))
    assert again.status_code == 410
    assert_safe_headers(again)
    assert "This link can no longer be used" in again.text

    slot = await m.slot_links(client, people["olga"], slot_id)
    assert slot["status"] == "SATISFIED"
    assert slot["satisfiedBy"] == "email:onboarding@acme.example"
    [kept] = slot["payload"]["document"]
    assert (kept["name"], kept["type"], kept["size"]) == ("bank.pdf", "application/pdf", len(m.PDF))
    [listed] = slot["links"]
    assert listed["status"] == "USED"
    assert (listed["opens"], listed["createdBy"], listed["recipientName"]) == (
        2,
        "olga",
        "Anna Acme",
    )
    assert listed["openedAt"] is not None

    lines = await w.timeline(client, people["olga"], run_id, kinds=None)
    kinds = [line["kind"] for line in lines if line["kind"].startswith("link.")]
    assert kinds == ["link.minted", "link.opened", "link.used"]
    minted_line = next(line for line in lines if line["kind"] == "link.minted")
    assert minted_line["actor"] == "olga"
    assert minted_line["details"]["recipient"] == "onboarding@acme.example"
    used = next(line for line in lines if line["kind"] == "link.used")
    assert used["actor"] == "email:onboarding@acme.example"
    assert used["details"]["opens"] == 2


async def test_only_slots_that_allow_links_and_only_managers_may_mint(world: World) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    answer = await m.mint(client, people["app"], upload, email="not-an-address")
    assert answer["__typename"] == "InvalidInput"
    assert "not an e-mail address" in answer["message"]
    too_long = await m.mint(client, people["olga"], upload, expires_in=31 * 86400)
    assert too_long["__typename"] == "InvalidInput"

    # Legal's review is a staff sign-off: its definition allows no link.
    await m.submit(client, (await m.minted(client, people, upload))["url"], {}, files=m.pdf())
    review = next(
        s for s in await m.slots(client, people["olga"], run["id"]) if s["name"] == "legal_review"
    )
    refused = await m.mint(client, people["olga"], review["id"])
    assert refused["__typename"] == "LinksNotAllowed"
    assert "magic_link=True" in refused["message"]

    spent_slot = await m.mint(client, people["olga"], upload)
    assert spent_slot["__typename"] == "SlotNotOpen"
    assert "The slot is satisfied" in spent_slot["message"]

    # Lee (legal) now sees the run, upload slots included, but manages none of its links.
    not_manager = await m.mint(client, people["lee"], upload)
    assert not_manager["__typename"] == "NotAllowed"


async def test_a_candidate_mints_only_once_they_hold_the_slot(world: World) -> None:
    client, people, services = world.client, world.people, world.services
    await principals.load(
        services, [{"id": "pia", "display_name": "Pia Procurement", "roles": ["procurement"]}]
    )
    pia = services.staff_tokens.mint("pia", services.clock.now())
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    refused = await m.mint(client, pia, upload)
    assert refused["__typename"] == "NotAllowed"
    assert "holder, its delegates" in refused["message"]
    assert (await w.claim(client, pia, upload))["__typename"] == "SlotSuccess"
    assert (await m.mint(client, pia, upload))["__typename"] == "MintMagicLinkSuccess"


async def test_a_reminder_mints_in_its_own_transaction(world: World) -> None:
    client, people, services = world.client, world.people, world.services
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    run_id, slot_id = relay.from_global_id(run["id"])[1], relay.from_global_id(upload)[1]
    async with services.db.transaction() as conn:
        minted = await links.mint_in(
            services,
            conn,
            run_id=run_id,
            slot_id=slot_id,
            recipient_name=None,
            recipient_email="onboarding@acme.example",
        )
    assert (await client.get(m.path_of(minted.url))).status_code == 200
    [line] = await w.timeline(client, people["olga"], run["id"], kinds=["link.minted"])
    assert (line["actor"], line["details"]["recipient"]) == ("taskflow", "onboarding@acme.example")


async def test_revoked_links_answer_like_any_unusable_link(world: World) -> None:
    client, people = world.client, world.people
    link, _, run_id = await m.vendor_link(client, people)
    revoked = await gql(
        client, m.REVOKE, {"input": {"linkId": link["link"]["id"]}}, token=people["olga"]
    )
    assert revoked.ok()["revokeMagicLink"]["link"] == {
        "id": link["link"]["id"],
        "status": "REVOKED",
        "revokedBy": "olga",
    }
    again = await gql(
        client, m.REVOKE, {"input": {"linkId": link["link"]["id"]}}, token=people["olga"]
    )
    assert again.ok()["revokeMagicLink"]["code"] == "LINK_UNUSABLE"
    assert "already revoked" in again.ok()["revokeMagicLink"]["message"]

    page = await client.get(m.path_of(link["url"]))
    assert page.status_code == 410
    posted = await m.submit(client, link["url"], {"document": "x"}, page="whatever")
    assert posted.status_code == 410
    assert posted.text == page.text
    kinds = [line["kind"] for line in await w.timeline(client, people["olga"], run_id)]
    assert "link.revoked" in kinds
    refused = [
        line for line in await w.timeline(client, people["olga"], run_id, kinds=["link.refused"])
    ]
    assert [line["reason"] for line in refused] == ["revoked"]


async def test_a_form_without_its_page_token_changes_nothing(world: World) -> None:
    client, people = world.client, world.people
    run = await m.start_vendor(client, people)
    slots = await m.upload_slots(client, people, run["id"])
    first = await m.minted(client, people, slots["bank details"])
    other = await m.minted(client, people, slots["certificate of incorporation"])
    other_page = m.page_token((await client.get(m.path_of(other["url"]))).text)

    for page in ("", "forged", other_page):
        sent = {"_page": page, "document": "ref", "valid_until": "2027-06-30"}
        answer = await client.post(m.path_of(first["url"]), data=sent)
        assert answer.status_code == 409
        assert "did not come from this page" in answer.text
        # What was typed is kept (a file input cannot be given a value back: the date can).
        assert 'value="2027-06-30"' in answer.text
    slot = await m.slot_links(client, people["olga"], slots["bank details"])
    assert slot["status"] == "OPEN"
    assert slot["links"][0]["status"] == "ACTIVE"


async def test_complete_with_link_over_graphql(world: World) -> None:
    client, people = world.client, world.people
    link, slot_id, _ = await m.vendor_link(client, people)

    async def use(payload: object) -> dict[str, object]:
        result = await gql(
            client, m.COMPLETE_WITH_LINK, {"input": {"token": link["token"], "payload": payload}}
        )
        return dict(result.ok()["completeWithLink"])

    bad = await use({"document": "", "colour": "red"})
    assert bad["__typename"] == "PayloadInvalid"
    assert {p["field"] for p in bad["problems"]} == {"document", "colour"}  # type: ignore[attr-defined]
    assert (await use(["not", "an", "object"]))["__typename"] == "PayloadInvalid"
    typed = await use({"document": "ref-77", "valid_until": "2027-12-31"})
    assert typed["__typename"] == "PayloadInvalid"  # a name typed in is not the document
    sent = await m.uploaded(client, slot_id, link=str(link["token"]))
    ok = await use({"document": [sent], "valid_until": "2027-12-31"})
    assert ok == {
        "__typename": "CompleteWithLinkSuccess",
        "label": "Upload bank details for Acme Logistics GmbH",
        "completedAt": "2026-12-01T09:00:00+00:00",
    }
    spent = await use({"document": "ref-78"})
    assert spent["__typename"] == "LinkUnusable"
    assert spent["code"] == "LINK_UNUSABLE"
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert slot["payload"] == {"document": [sent], "valid_until": "2027-12-31"}


async def test_the_link_host_comes_from_configuration_not_the_request(world: World) -> None:
    client, people, services = world.client, world.people, world.services
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    services.settings = dataclasses.replace(
        services.settings, public_url="https://forms.taskflow.example"
    )
    response = await client.post(
        "/graphql",
        json={
            "query": m.MINT,
            "variables": {
                "input": {"slotId": upload, "recipient": {"email": "onboarding@acme.example"}}
            },
        },
        headers={
            "Authorization": f"Bearer {people['olga']}",
            "Host": "evil.example",
            "X-Forwarded-Host": "evil.example",
        },
    )
    url = response.json()["data"]["mintMagicLink"]["url"]
    assert url.startswith("https://forms.taskflow.example/l/")
