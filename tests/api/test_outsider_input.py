"""Outsider input: file and URL fields take http(s) or plain references only, on the
link page and through the API; the throttle never stores a reversible client key."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from taskflow.core.definition import fields as fl
from taskflow.service.common.container import Services
from taskflow.service.links import link_use
from tests.api import magic as m
from tests.conftest import gql

pytestmark = pytest.mark.anyio

HOSTILE = [
    "javascript:alert(document.cookie)",
    "  JavaScript:alert(1)",
    "java\tscript:alert(1)",
    "\x01javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "//evil.example/x.pdf",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_file_and_url_fields_refuse_other_schemes(value: str) -> None:
    for field in (fl.Field.file("document"), fl.Field.url("site")):
        with pytest.raises(fl.PayloadError) as refused:
            fl.validate_payload([field], {field.name: value})
        assert "http(s) URL" in refused.value.message


@pytest.mark.parametrize(
    "value",
    [
        "ref-77",
        "invoices/2026-11.pdf",
        "https://files.example/a",
        "https://files.example/certificate of incorporation.pdf",
    ],
)
def test_file_fields_take_http_urls_and_plain_references(value: str) -> None:
    assert fl.validate_payload([fl.Field.file("document")], {"document": value}) == {
        "document": value
    }


async def test_the_link_page_refuses_a_javascript_file_reference(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    link, slot_id, _ = await m.vendor_link(client, people)
    answer = await m.submit(client, link["url"], {"document": "javascript:alert(1)"})
    assert answer.status_code == 422
    # The vendor's document field takes uploads only: no typed reference of any kind.
    assert "upload the file first" in answer.text
    slot = await m.slot_links(client, people["olga"], slot_id)
    assert slot["status"] == "OPEN"
    assert slot["payload"] is None


async def test_complete_with_link_refuses_a_javascript_file_reference(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    link, slot_id, _ = await m.vendor_link(client, people)
    result = await gql(
        client,
        m.COMPLETE_WITH_LINK,
        {"input": {"token": link["token"], "payload": {"document": "javascript:alert(1)"}}},
    )
    answer = result.ok()["completeWithLink"]
    assert answer["__typename"] == "PayloadInvalid"
    assert answer["problems"][0]["field"] == "document"
    assert "upload the file first" in answer["problems"][0]["reason"]
    assert (await m.slot_links(client, people["olga"], slot_id))["status"] == "OPEN"


async def test_the_throttle_key_is_keyed_not_a_plain_hash(
    client: httpx.AsyncClient, services: Services
) -> None:
    for _ in range(3):
        await client.get("/l/not-a-real-token")
    async with services.db.connection() as conn:
        stored = [r["client"] for r in await conn.fetch("SELECT client FROM link_throttle")]
    assert stored, "the refused requests were counted"
    # Whoever reads the table cannot find the address by hashing every IPv4 address.
    for address in ("127.0.0.1", "testclient", "unknown", "None"):
        plain = hashlib.sha256(f"taskflow.link-client:{address}".encode()).hexdigest()
        assert plain not in stored
    assert link_use.client_key(services, "127.0.0.1") != link_use.client_key(services, "127.0.0.2")
