"""The vendor's reminder arrives by e-mail, and the link in it completes the slot in a browser.

A real ``taskflow serve`` (its in-process worker on) with ``TASKFLOW_SMTP_URL``
pointing at a real SMTP server (aiosmtpd on loopback, in this test process).
Procurement's lead brings the vendor's first reminder forward (``rescheduleTimer``,
as an operator would); the worker fires it, mails it with a freshly minted link,
and headless Chromium follows the link from the mail and uploads the document.
Berlin office hours would hold the mail back at night, so this deployment's
``de-berlin`` calendar is open around the clock (a calendar folder of its own).
"""

from __future__ import annotations

import re
import shutil
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from taskflow.config import config
from tests import smtp_server
from tests.acceptance.conftest import Deployment, wait_until
from tests.acceptance.test_magic_link_browser import _gql, _token, browser
from tests.smtp_server import Inbox

PDF = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n"
pytestmark = pytest.mark.slow
__all__ = ["browser"]  # the fixture, imported for this module's tests

VENDOR = {
    "vendor_number": "V-41000",
    "legal_name": "Initech Supplies BV",
    "country": "NL",
    "vat_number": "NL123456789B01",
    "contact_email": "docs@initech.example",
    "contact_name": "Ingrid Initech",
    "required_documents": ["bank details"],
    "handles_personal_data": False,
}
START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  ... on StartRunSuccess { run { id } } ... on Refusal { code message } } }"""
TIMERS = """query($filter: TimerFilter) { timers(first: 50, filter: $filter) {
  edges { node { id kind state dueAt } } } }"""
RESCHEDULE = """mutation($input: RescheduleTimerInput!) { rescheduleTimer(input: $input) {
  __typename ... on Refusal { code message } } }"""
SLOTS = """query($id: ID!) { run(id: $id) { slots { id name status satisfiedBy } } }"""
OUTBOX = """{ notifications(first: 20, filter: {recipients: OUTSIDERS}) {
  edges { node { recipientEmail deliveryState attempts linkId sentAt } } } }"""


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server.smtp_server() as running:
        yield running


def _always_open_berlin(folder: Path) -> Path:
    shutil.copytree(config.PROJECT_ROOT / "calendars", folder)
    (folder / "de-berlin.toml").write_text(
        'name = "de-berlin"\ntimezone = "Europe/Berlin"\n\n[week]\nmon-sun = ["00:00-24:00"]\n'
    )
    return folder


def test_the_reminder_mail_s_link_completes_the_upload_in_chromium(
    deployment: Deployment, browser: Browser, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    deployment.env.update(
        {
            "TASKFLOW_SMTP_URL": f"smtp://127.0.0.1:{port}",
            "TASKFLOW_MAIL_FROM": "Procurement <procurement@buyer.example>",
            "TASKFLOW_CALENDARS": str(_always_open_berlin(deployment.log.parent / "calendars")),
        }
    )
    loaded = deployment.run("principals", "load", "examples/principals.json")
    assert loaded.returncode == 0, loaded.stderr
    app, olga = (_token(deployment, who) for who in ("app", "olga"))
    server = deployment.serve()
    try:
        subject = {"type": "vendor", "externalId": "V-41000", "attributes": VENDOR}
        started = _gql(deployment, app, START, input={"workflow": "vendor-onboarding",
                                                      "subject": subject})  # fmt: skip
        run_id = started["startRun"]["run"]["id"]
        timers: list[dict[str, Any]] = [
            e["node"]
            for e in _gql(deployment, olga, TIMERS, filter={"runId": run_id})["timers"]["edges"]
        ]
        reminders = [t for t in timers if t["kind"] == "reminder" and t["state"] == "ARMED"]
        assert reminders, timers
        first = min(reminders, key=lambda t: t["dueAt"])
        moved = _gql(
            deployment,
            olga,
            RESCHEDULE,
            input={
                "timerId": first["id"],
                "dueAt": datetime.now(UTC).isoformat(),
                "reason": "remind the vendor today",
            },
        )["rescheduleTimer"]
        assert moved["__typename"] == "TimerSuccess", moved

        wait_until(lambda: bool(inbox.to("docs@initech.example")), 30, "the reminder's mail")
        [mail] = inbox.to("docs@initech.example")
        assert mail["To"] == "Ingrid Initech <docs@initech.example>"
        assert mail["From"] == "Procurement <procurement@buyer.example>"
        assert mail["List-Unsubscribe"] is None
        text = smtp_server.text_of(mail)
        found = re.search(re.escape(deployment.base_url) + r"/l/\S+", text)
        assert found, text
        url = found.group(0)

        page = browser.new_context().new_page()
        page.goto(url)
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "Upload bank details for Initech Supplies BV"
        )
        # The vendor attaches the document itself (a file field: docs/files.md).
        page.get_by_label("Document").set_input_files(
            files=[{"name": "bank.pdf", "mimeType": "application/pdf", "buffer": PDF}]
        )
        page.get_by_role("button", name="Send").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Thank you")

        slots = _gql(deployment, olga, SLOTS, id=run_id)["run"]["slots"]
        [upload] = [s for s in slots if s["name"] == "upload"]
        assert upload["status"] == "SATISFIED"
        assert upload["satisfiedBy"] == "email:docs@initech.example"
        notes = [e["node"] for e in _gql(deployment, app, OUTBOX)["notifications"]["edges"]]
        assert [(n["deliveryState"], n["attempts"]) for n in notes] == [("SENT", 1)]
        assert notes[0]["linkId"] is not None
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    log = deployment.log.read_text()
    assert url.rsplit("/", 1)[1][:30] not in log  # the token went to the mail, not the log
