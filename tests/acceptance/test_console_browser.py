"""Two staff work the console in two headless Chromiums: one claims, the other's inbox no
longer offers the slot and a late claim shows the typed refusal; the first completes it.

Debian's ``chromium`` driven by Playwright (as tests/acceptance/test_report_browser.py),
the app served by uvicorn on the test's loop. Screenshots of each page are written to
``$TASKFLOW_ARTIFACTS_DIR/console`` (default ``build/artifacts/console``), which CI keeps.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from httpx_ws import WebSocketUpgradeError, aconnect_ws
from playwright.async_api import Browser, Page, async_playwright

from taskflow.service.common.container import Services
from tests.acceptance.test_magic_link_browser import CHROMIUM, CHROMIUM_ARGS
from tests.acceptance.test_report_browser import serving
from tests.api import workflows as w
from tests.api.live import PROTOCOL

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SHOTS = Path(os.environ.get("TASKFLOW_ARTIFACTS_DIR", "build/artifacts")) / "console"


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


async def _signed_in(browser: Browser, base: str, token: str, width: int = 1100) -> Page:
    page = await (await browser.new_context(viewport={"width": width, "height": 800})).new_page()
    await page.goto(f"{base}/console")
    assert await page.locator("h1").inner_text() == "Console: sign in"
    await page.get_by_label("Token").fill(token)
    async with page.expect_navigation():
        await page.keyboard.press("Enter")
    assert await page.locator("h1").inner_text() == "My inbox"
    return page


async def _shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5_000


async def test_two_staff_claim_refuse_and_complete(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-101")
    await w.start_expense(client, people["app"], "EXP-102", amount=80.0)
    async with serving(services) as base, chromium() as browser:
        sign_in = await (await browser.new_context()).new_page()
        await sign_in.goto(f"{base}/console")
        await _shot(sign_in, "sign-in")
        fiona = await _signed_in(browser, base, people["fiona"])
        frank = await _signed_in(browser, base, people["frank"], width=390)  # a phone
        assert await fiona.locator("tbody tr").count() == 2
        for each in (fiona, frank):  # both inboxes hold their live subscription
            await each.wait_for_selector("html[data-live=on]")
        await _shot(fiona, "inbox")
        await _shot(frank, "inbox-phone")
        first = fiona.locator("tbody tr").first
        slot_id = await first.get_attribute("data-slot")
        # Fiona claims from her inbox, by keyboard.
        await first.get_by_role("button").focus()
        async with fiona.expect_navigation():
            await fiona.keyboard.press("Enter")
        assert "held by you" in await fiona.locator(f"#slot-{slot_id}").inner_text()
        # Frank's open inbox loses the row within a second (inboxChanged), unreloaded.
        await frank.wait_for_selector(f"#slot-{slot_id}", state="detached", timeout=1000)
        assert "left your inbox" in await frank.locator("#live").inner_text()
        assert await frank.locator("tbody tr").count() == 1
        await _shot(frank, "inbox-live-phone")
        # His open slot page refuses what he tries on it.
        await frank.goto(f"{base}/console/slots/{slot_id}")
        await frank.locator("#assign-to").fill("frank")
        await frank.get_by_role("button", name="Assign").click()
        refusal = await frank.get_by_role("alert").inner_text()
        assert refusal.split(":")[0].isupper(), refusal  # the typed code, then the message
        await _shot(frank, "refused")
        # Fiona completes it from her inbox: the form from the slot's fields.
        await fiona.locator(f"#slot-{slot_id}").get_by_role("link").first.click()
        await fiona.get_by_role("button", name="Complete").click()
        assert await fiona.locator("#e-decision").count() == 1  # the API's validation
        await _shot(fiona, "slot-invalid")
        await fiona.get_by_label("Decision (required)").select_option("approve")
        await fiona.get_by_label("Comment").fill("Receipts match.")
        async with fiona.expect_navigation():
            await fiona.get_by_role("button", name="Complete").click()
        await fiona.goto(f"{base}/console")
        assert await fiona.locator(f"#slot-{slot_id}").count() == 0
        assert await fiona.locator("tbody tr").count() == 1


async def test_the_live_socket_needs_a_session_and_this_site(
    services: Services, people: dict[str, str]
) -> None:
    async with serving(services) as base:
        origin = {"Origin": base}

        def fresh(cookies: httpx.Cookies | None = None) -> httpx.AsyncClient:
            # A client per socket: a refused upgrade leaves its connection unusable.
            return httpx.AsyncClient(base_url=base, cookies=cookies)

        async def refused(cookies: httpx.Cookies | None, headers: dict[str, str]) -> None:
            async with fresh(cookies) as http:
                with pytest.raises(WebSocketUpgradeError):
                    async with aconnect_ws(
                        "/console/live", http, subprotocols=[PROTOCOL], headers=dict(headers)
                    ):
                        pass

        await refused(None, origin)  # no session
        async with fresh() as http:
            signed = await http.post(
                "/console/sign-in", data={"token": people["frank"]}, headers=origin
            )
            assert signed.status_code == 303, signed.text
            cookies = http.cookies
        await refused(cookies, {"Origin": "https://evil.example"})  # another site's page
        async with (
            fresh(cookies) as http,
            aconnect_ws("/console/live", http, subprotocols=[PROTOCOL], headers=dict(origin)) as ws,
        ):
            await ws.send_text('{"type": "connection_init", "payload": {}}')
            assert "connection_ack" in await ws.receive_text()
