"""A magic link goes only to an address the slot's candidates or its ``outsiders`` rule name."""

from __future__ import annotations

import httpx
import pytest

from tests.api import event_fixtures
from tests.api import magic as m
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

event_services = event_fixtures.event_services
api = event_fixtures.api
tokens = event_fixtures.tokens


async def test_a_lead_cannot_mint_a_link_to_an_address_of_their_own(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    """The exploit: any lead completed an outsider slot through a link sent to themselves."""
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    for lead, address in (("olga", "olga.private@mail.example"), ("max", "max@example.com")):
        refused = await m.mint(client, people[lead], upload, email=address)
        assert refused["__typename"] == "RecipientNotAllowed", refused
        assert refused["code"] == "RECIPIENT_NOT_ALLOWED"
        assert address in refused["message"]
    links = await m.slot_links(client, people["olga"], upload)
    assert links["links"] == []
    refusals = await w.timeline(client, people["ada"], run["id"], ["refused"])
    assert [r["details"]["code"] for r in refusals] == ["RECIPIENT_NOT_ALLOWED"] * 2

    # The vendor's own address (as the candidates name it, in any letter case) is fine.
    ok = await m.mint(client, people["olga"], upload, email="Onboarding@ACME.example")
    assert ok["__typename"] == "MintMagicLinkSuccess", ok


async def test_an_outsiders_rule_admits_more_addresses(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    subject = {
        "reference": "C-7",
        "client_email": "ceo@client.example",
        "deputy_email": "deputy@client.example",
    }
    started = await w.start(api, tokens["app"], "signature", "contract", "C-7", subject)
    assert started["__typename"] == "StartRunSuccess", started
    result = await gql(
        api,
        "query($id: ID!) { run(id: $id) { slots { id name } } }",
        {"id": started["run"]["id"]},
        token=tokens["ada"],
    )
    sign = result.ok()["run"]["slots"][0]["id"]
    for address in ("ceo@client.example", "deputy@client.example"):
        ok = await m.mint(api, tokens["ada"], sign, email=address)
        assert ok["__typename"] == "MintMagicLinkSuccess", (address, ok)
    refused = await m.mint(api, tokens["ada"], sign, email="ada@example.com")
    assert refused["__typename"] == "RecipientNotAllowed", refused
    assert "outsiders: email:{subject.deputy_email}" in refused["message"]
