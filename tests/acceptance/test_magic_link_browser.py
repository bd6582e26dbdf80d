"""A vendor completes its document uploads through magic links in a real browser.

Headless Chromium (Debian's ``chromium``, installed by ``.ci/run``) driven by
Playwright against a real ``taskflow serve`` process on the embedded database.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VENDOR = {
    "vendor_number": "V-31337",
    "legal_name": "Globex Freight AG",
    "country": "CH",
    "vat_number": "CHE123456789",
    "contact_email": "docs@globex.example",
    "required_documents": ["certificate of incorporation", "bank details"],
    "handles_personal_data": False,
}
START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  ... on StartRunSuccess { run { id } } ... on Refusal { code message } } }"""
SLOTS = """query($id: ID!) { run(id: $id) { state slots { id name item status } } }"""
MINT = """mutation($input: MintMagicLinkInput!) { mintMagicLink(input: $input) {
  ... on MintMagicLinkSuccess { url token } ... on Refusal { code message } } }"""
INBOX = """{ inbox(first: 20) { edges { node { name label } } } }"""


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


def _gql(deployment: Deployment, token: str, query: str, **variables: Any) -> dict[str, Any]:
    return deployment.data(token, query, **variables)


#: A small PDF and a ZIP archive (what their sniffing reads).
PDF = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n"
ZIP = b"PK\x03\x04" + b"\x00" * 60


def _token(deployment: Deployment, who: str) -> str:
    minted = deployment.run("token", who, "--ttl", "1h")
    assert minted.returncode == 0, minted.stderr
    return minted.stdout.strip()


def _upload(page: Page, url: str, document: str) -> None:
    """What the vendor does: open the link, make a mistake, fix it, send, look again."""
    page.goto(url)
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Upload {document} for Globex Freight AG"
    )
    expect(page.get_by_text("V-31337")).to_be_visible()
    page.get_by_label("Valid until").fill("2027-06-30")
    page.get_by_role("button", name="Send").click()
    # Nothing typed in the document field: the error sits next to it, the date is kept.
    expect(page.locator("#f-document-error")).to_have_text("is required")
    expect(page.get_by_label("Document")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Valid until")).to_have_value("2027-06-30")

    # A ZIP named like a PDF is judged by its bytes and refused; the real PDF is taken.
    page.get_by_label("Document").set_input_files(
        files=[{"name": f"{document}.pdf", "mimeType": "application/pdf", "buffer": ZIP}]
    )
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#f-document-error")).to_contain_text("judged by its content")
    page.get_by_label("Document").set_input_files(
        files=[{"name": f"{document}.pdf", "mimeType": "application/pdf", "buffer": PDF}]
    )
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you")
    expect(page.get_by_role("status")).to_contain_text(f"Upload {document} for Globex Freight AG")

    page.reload()  # a browser reload re-sends the form: the link is spent
    expect(page.get_by_role("heading", level=1)).to_have_text("This link can no longer be used")
    page.goto(url)  # and opening the link from the mail again says the same
    expect(page.get_by_role("heading", level=1)).to_have_text("This link can no longer be used")


def test_a_vendor_uploads_every_document_by_link_and_legal_review_opens(
    deployment: Deployment, browser: Browser
) -> None:
    loaded = deployment.run("principals", "load", "examples/principals.json")
    assert loaded.returncode == 0, loaded.stderr
    app, olga, lee = (_token(deployment, who) for who in ("app", "olga", "lee"))
    server = deployment.serve()
    try:
        run = _gql(
            deployment,
            app,
            START,
            input={
                "workflow": "vendor-onboarding",
                "subject": {"type": "vendor", "externalId": "V-31337", "attributes": VENDOR},
            },
        )["startRun"]["run"]
        slots = _gql(deployment, olga, SLOTS, id=run["id"])["run"]["slots"]
        uploads = {s["item"]: s["id"] for s in slots if s["name"] == "upload"}
        assert set(uploads) == set(VENDOR["required_documents"])

        urls = {}
        for document, slot_id in uploads.items():
            minted = _gql(
                deployment,
                olga,
                MINT,
                input={
                    "slotId": slot_id,
                    "recipient": {"name": "Greta Globex", "email": "docs@globex.example"},
                },
            )["mintMagicLink"]
            assert minted["url"].startswith(deployment.base_url + "/l/"), minted
            urls[document] = minted["url"]
        assert [e["node"]["name"] for e in _gql(deployment, lee, INBOX)["inbox"]["edges"]] == []

        context = browser.new_context(viewport={"width": 390, "height": 844})  # a phone
        page = context.new_page()
        for document, url in urls.items():
            _upload(page, url, document)
        context.close()

        after = _gql(deployment, olga, SLOTS, id=run["id"])["run"]
        assert {s["status"] for s in after["slots"] if s["name"] == "upload"} == {"SATISFIED"}
        inbox = [e["node"] for e in _gql(deployment, lee, INBOX)["inbox"]["edges"]]
        assert [s["name"] for s in inbox] == ["legal_review"]
        assert inbox[0]["label"] == "Legal review of Globex Freight AG (V-31337)"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    log = deployment.log.read_text()
    for url in urls.values():
        assert url.rsplit("/", 1)[1][:30] not in log
