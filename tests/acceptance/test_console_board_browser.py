"""The console's board, a run's timeline, delegation and the live slot page in headless
Chromium: a team lead moves a ticket on the board (a phone-width board too), reads its
timeline, hands its slot to a colleague, and the slot's page another member has open shows
the new holder within a second, unreloaded; a board and a run's page follow a move made
elsewhere, unreloaded.

Debian's ``chromium`` driven by Playwright (as tests/acceptance/test_console_browser.py);
screenshots go to ``$TASKFLOW_ARTIFACTS_DIR/console``.
"""

from __future__ import annotations

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.common.container import Services
from tests.acceptance.test_console_browser import _shot, _signed_in, chromium
from tests.acceptance.test_report_browser import serving
from tests.api import workflows as w
from tests.api.test_console_boards import _local, _open_ticket
from tests.api.test_undo import MOVE
from tests.conftest import gql

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


async def test_a_board_and_a_run_page_follow_a_move_made_elsewhere(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id = await _open_ticket(client, people, "T-202")
    async with serving(services) as base, chromium() as browser:
        # Tara has the board open and, beside it, the run's page.
        board = await _signed_in(browser, base, people["tara"])
        await board.goto(f"{base}/console/boards/support-ticket")
        await board.wait_for_selector("html[data-live=on]")
        card = f'article[data-run="{run_id}"]'
        assert await board.locator(f'section[data-lane="open"] {card}').count() == 1
        run_page = await _signed_in(browser, base, people["tara"], width=390)
        await run_page.goto(f"{base}/console/runs/{run_id}")
        await run_page.wait_for_selector("html[data-live=on]")
        assert await run_page.locator("#state").inner_text() == "open (active)"
        lines = await run_page.locator("table.timeline tbody tr").count()
        # In another tab of the board she is typing a question to the customer.
        typing = await _signed_in(browser, base, people["tara"])
        await typing.goto(f"{base}/console/boards/support-ticket")
        await typing.wait_for_selector("html[data-live=on]")
        await typing.locator(card).get_by_label("Question (required)").fill("Which OS?")

        # Sasha, a member of the team, takes the first response and asks the customer.
        response = await w.slot_named(client, people["sasha"], "first_response", "T-202")
        assert (await w.claim(client, people["sasha"], response["id"]))["__typename"] == (
            "SlotSuccess"
        )
        move = {
            "runId": relay.to_global_id("Run", run_id),
            "move": "ask_customer",
            "input": {"question": "Which browser?"},
        }
        moved = (await gql(client, MOVE, {"input": move}, token=people["sasha"])).ok()["move"]
        assert moved["run"]["state"] == "waiting_for_customer", moved

        # The card changes lane on Tara's board within a few seconds, unreloaded, and says so.
        await board.wait_for_selector(
            f'section[data-lane="waiting_for_customer"] {card}', timeout=5000
        )
        assert await board.locator(f'section[data-lane="open"] {card}').count() == 0
        assert "may no longer apply" in await board.locator("#live").inner_text()
        await _shot(board, "board-live")
        # The run's page shows the new state, its moves and the move in its timeline.
        moved_on = run_page.locator("#state", has_text="waiting_for_customer (active)")
        await moved_on.wait_for(timeout=5000)
        assert await run_page.locator("table.timeline tbody tr").count() > lines
        assert "Which browser?" in await run_page.locator("table.timeline").inner_text()
        assert "changed elsewhere" in await run_page.locator("#live").inner_text()
        await _shot(run_page, "run-live-phone")
        # The tab she is typing in keeps her words and asks her to reload before moving.
        await typing.locator("#live", has_text="reload before making the move").wait_for(
            timeout=5000
        )
        assert await typing.get_by_label("Question (required)").input_value() == "Which OS?"
