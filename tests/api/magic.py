"""Helpers for the magic-link tests: a vendor onboarding run, links minted over GraphQL."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import httpx

from tests.api import workflows as w
from tests.conftest import gql

#: The vendor of the link tests: no personal data, so no security review.
VENDOR = {**w.VENDOR, "handles_personal_data": False}


MINT = """mutation($input: MintMagicLinkInput!) { mintMagicLink(input: $input) {
  __typename
  ... on MintMagicLinkSuccess { url token link { id status recipientEmail opens expiresAt } }
  ... on Refusal { code message }
} }"""

REVOKE = """mutation($input: RevokeMagicLinkInput!) { revokeMagicLink(input: $input) {
  __typename
  ... on RevokeMagicLinkSuccess { link { id status revokedBy } }
  ... on Refusal { code message }
} }"""

COMPLETE_WITH_LINK = """mutation($input: CompleteWithLinkInput!) { completeWithLink(input: $input) {
  __typename
  ... on CompleteWithLinkSuccess { label completedAt }
  ... on PayloadInvalid { problems { field reason } }
  ... on TooManyRequests { retryAfterSeconds }
  ... on Refusal { code message }
} }"""

SLOT_LINKS = """query($id: ID!) { node(id: $id) { ... on Slot { status satisfiedBy payload
  links { id status recipientName recipientEmail createdBy opens openedAt usedAt revokedAt }
} } }"""

RUN_SLOTS = """query($id: ID!) { run(id: $id) { state slots { id name status item } } }"""


async def start_vendor(
    client: httpx.AsyncClient, people: dict[str, str], **changes: Any
) -> dict[str, Any]:
    """A vendor onboarding run in 'collecting'; returns the run (id, state...)."""
    started = await w.start(
        client, people["app"], "vendor-onboarding", "vendor", "V-20931", {**VENDOR, **changes}
    )
    assert started["__typename"] == "StartRunSuccess", started
    return dict(started["run"])


async def slots(client: httpx.AsyncClient, token: str, run_id: str) -> list[dict[str, Any]]:
    result = await gql(client, RUN_SLOTS, {"id": run_id}, token=token)
    return list(result.ok()["run"]["slots"])


async def upload_slots(
    client: httpx.AsyncClient, people: dict[str, str], run_id: str
) -> dict[str, str]:
    """Document -> upload slot id."""
    found = await slots(client, people["olga"], run_id)
    return {s["item"]: s["id"] for s in found if s["name"] == "upload"}


async def mint(
    client: httpx.AsyncClient,
    token: str,
    slot_id: str,
    *,
    email: str = "onboarding@acme.example",
    name: str | None = "Anna Acme",
    expires_in: int | None = None,
) -> dict[str, Any]:
    variables = {
        "input": {
            "slotId": slot_id,
            "recipient": {"name": name, "email": email},
            "expiresIn": expires_in,
        }
    }
    return dict((await gql(client, MINT, variables, token=token)).ok()["mintMagicLink"])


async def minted(
    client: httpx.AsyncClient, people: dict[str, str], slot_id: str, **kwargs: Any
) -> dict[str, Any]:
    answer = await mint(client, people["olga"], slot_id, **kwargs)
    assert answer["__typename"] == "MintMagicLinkSuccess", answer
    return answer


class VendorLink(NamedTuple):
    """A link minted for one upload slot of a fresh vendor run."""

    link: dict[str, Any]
    slot_id: str
    run_id: str


async def vendor_link(
    client: httpx.AsyncClient, people: dict[str, str], document: str = "bank details", **kw: Any
) -> VendorLink:
    """A fresh vendor run, and a link minted by olga for its ``document`` upload slot."""
    run = await start_vendor(client, people)
    slot_id = (await upload_slots(client, people, run["id"]))[document]
    return VendorLink(await minted(client, people, slot_id, **kw), slot_id, run["id"])


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def page_token(html: str) -> str:
    found = re.search(r'name="_page" value="([^"]+)"', html)
    assert found, "the form carries no page token"
    return found.group(1)


async def submit(
    client: httpx.AsyncClient,
    url: str,
    fields: dict[str, str],
    *,
    page: str | None = None,
    files: dict[str, tuple[str, bytes, str]] | None = None,
) -> httpx.Response:
    """Open the page like a browser, then send the form (and ``files``, as its file inputs
    would) with its page token."""
    if page is None:
        shown = await client.get(path_of(url))
        page = page_token(shown.text) if shown.status_code == 200 else "none"
    return await client.post(path_of(url), data={"_page": page, **fields}, files=files)


#: The first bytes of a PDF (what its sniffing reads) and a little body.
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n"


def pdf(name: str = "bank.pdf") -> dict[str, tuple[str, bytes, str]]:
    """The files of a link page's form that attaches one PDF as its ``document``."""
    return {"document": (name, PDF, "application/pdf")}


async def uploaded(
    client: httpx.AsyncClient,
    slot_id: str,
    *,
    token: str | None = None,
    link: str | None = None,
    name: str = "bank.pdf",
) -> dict[str, Any]:
    """A PDF uploaded with ``POST /files`` for the slot's ``document``, by a staff ``token``
    or a magic ``link``'s token; the reference it answers."""
    answer = await client.post(
        "/files",
        data={"slot": slot_id, "field": "document"} | ({"link": link} if link else {}),
        files={"file": (name, PDF, "application/pdf")},
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def slot_links(client: httpx.AsyncClient, token: str, slot_id: str) -> dict[str, Any]:
    return dict((await gql(client, SLOT_LINKS, {"id": slot_id}, token=token)).ok()["node"])
