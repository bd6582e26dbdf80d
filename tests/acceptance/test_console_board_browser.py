"""The console's board, a run's timeline, delegation and the live slot page in headless
Chromium: a team lead moves a ticket on the board (a phone-width board too), reads its
timeline, hands its slot to a colleague, and the slot's page another member has open shows
the new holder within a second, unreloaded.

Debian's ``chromium`` driven by Playwright (as tests/acceptance/test_console_browser.py);
screenshots go to ``$TASKFLOW_ARTIFACTS_DIR/console``.
"""

from __future__ import annotations

import httpx
import pytest

from taskflow.service.common.container import Services
from tests.acceptance.test_console_browser import _shot, _signed_in, chromium
from tests.acceptance.test_report_browser import serving
from tests.api import workflows as w
from tests.api.test_console_boards import _local, _open_ticket

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_lead_moves_reads_and_delegates_while_a_slot_page_stays_live(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id = await _open_ticket(client, people, "T-201")
    response = await w.slot_named(client, people["sasha"], "first_response", "T-201")
    slot_id = _local(response["id"])
    async with serving(services) as base, chromium() as browser:
        tara = await _signed_in(browser, base, people["tara"])
        await tara.get_by_role("link", name="Boards").click()
        await tara.get_by_role("link", name="support-ticket").click()
        assert await tara.locator("h1").inner_text() == "Board: support-ticket"
        lane = tara.locator('section[data-lane="open"]')
        assert await lane.locator("article.card").count() == 1
        await _shot(tara, "board")
        phone = await _signed_in(browser, base, people["tara"], width=390)
        await phone.goto(f"{base}/console/boards/support-ticket")
        await _shot(phone, "board-phone")

        # Sasha has the slot's page open; it listens for changes to the slot.
        sasha = await _signed_in(browser, base, people["sasha"], width=390)
        await sasha.goto(f"{base}/console/slots/{slot_id}")
        await sasha.wait_for_selector("html[data-live=on]")
        assert await sasha.locator("#status").inner_text() == "open"

        # The run's page: its state, slots and timeline.
        await lane.get_by_role("link", name="ticket T-201").click()
        assert await tara.locator("#state").inner_text() == "open (active)"
        assert await tara.locator("table.timeline tbody tr").count() >= 3
        assert "slot.satisfied" in await tara.locator("table.timeline").inner_text()
        await _shot(tara, "run")

        # Tara (the team's lead, a delegate) hands the slot to Sven, by keyboard.
        await tara.get_by_role("link", name="Answer T-201").click()
        await tara.get_by_label("Delegate to (login)").fill("sven")
        async with tara.expect_navigation():
            await tara.keyboard.press("Enter")
        assert "held by sven" in await tara.locator("#status").inner_text()
        # Sasha's page shows it within a second, unreloaded, and says so.
        await sasha.wait_for_function(
            "document.getElementById('status').textContent.includes('held by sven')",
            timeout=1000,
        )
        assert "reload before acting" in await sasha.locator("#live").inner_text()
        await _shot(sasha, "slot-live-phone")

        # Back on the board: a legal move with the input it takes.
        await tara.goto(f"{base}/console/boards/support-ticket")
        card = tara.locator(f'article[data-run="{run_id}"]')
        await card.get_by_label("Question (required)").fill("Which browser?")
        async with tara.expect_navigation():
            await card.get_by_role("button", name="Ask customer").click()
        waiting = tara.locator('section[data-lane="waiting_for_customer"]')
        assert await waiting.locator(f'article[data-run="{run_id}"]').count() == 1
