"""The console's live inbox and board patch the one card a change names, in headless
Chromium: the other cards stay the very DOM nodes they were (each is tagged with a script
property before the change and still carries it after), the changed card shows its new state
in its place, a card that left goes, and a card that arrived takes its place in the page's
order. The changes are made elsewhere, by other people's GraphQL mutations over HTTP.

Debian's ``chromium`` driven by Playwright (as tests/acceptance/test_console_browser.py).
"""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page

from taskflow.api.graphql.common import relay
from taskflow.service.common.container import Services
from tests.acceptance.test_console_browser import _shot, _signed_in, chromium
from tests.acceptance.test_report_browser import serving
from tests.api import workflows as w
from tests.api.test_console_boards import _open_ticket
from tests.api.test_undo import MOVE
from tests.conftest import gql

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: Tags every card (inbox row or board card) with its id as a script property: a node the
#: page replaced or re-read has none.
TAG = """sel => document.querySelectorAll(sel).forEach(n => { n.__kept = n.dataset.id; })"""
KEPT = (
    """sel => Array.from(document.querySelectorAll(sel)).filter(n => n.__kept).map(n => n.__kept)"""
)
ROWS = "table.inbox tbody tr[data-id]"


async def ids(page: Page, selector: str) -> list[str]:
    found: list[str] = await page.eval_on_selector_all(
        selector, "nodes => nodes.map(n => n.dataset.id)"
    )
    return found


async def test_the_inbox_patches_the_row_a_change_names(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    for ref in ("EXP-C1", "EXP-C2", "EXP-C3"):
        await w.start_expense(client, people["app"], ref)
    slots = {s["subject"]["externalId"]: s["id"] for s in await w.inbox(client, people["fiona"])}
    async with serving(services) as base, chromium() as browser:
        fiona = await _signed_in(browser, base, people["fiona"])
        await fiona.wait_for_selector("html[data-live=on]")
        before = await ids(fiona, ROWS)
        assert sorted(before) == sorted(slots.values())
        await fiona.evaluate(TAG, ROWS)

        # Frank takes EXP-C2: it leaves Fiona's inbox; the other rows are untouched nodes.
        assert (await w.claim(client, people["frank"], slots["EXP-C2"]))["__typename"] == (
            "SlotSuccess"
        )
        gone = f'{ROWS}[data-id="{slots["EXP-C2"]}"]'
        await fiona.wait_for_selector(gone, state="detached", timeout=5000)
        kept = [i for i in before if i != slots["EXP-C2"]]
        assert await fiona.evaluate(KEPT, ROWS) == kept
        assert "left your inbox" in await fiona.locator("#live").inner_text()

        # Fiona claims EXP-C1 from another device: its row says so, where a reload would put
        # it (claiming meets the claim milestone, so its due, and its place, may move).
        assert (await w.claim(client, people["fiona"], slots["EXP-C1"]))["__typename"] == (
            "SlotSuccess"
        )
        mine = fiona.locator(f'{ROWS}[data-id="{slots["EXP-C1"]}"] [data-status]')
        await mine.filter(has_text="held by you").wait_for(timeout=5000)
        reloaded = [s["id"] for s in await w.inbox(client, people["fiona"])]
        assert sorted(reloaded) == sorted(kept)
        assert await ids(fiona, ROWS) == reloaded
        assert await fiona.evaluate(KEPT, ROWS) == [i for i in kept if i != slots["EXP-C1"]]

        # A new expense arrives: its row appears, the others are still the same nodes.
        await w.start_expense(client, people["app"], "EXP-C4")
        await fiona.locator(ROWS, has_text="EXP-C4").wait_for(timeout=5000)
        assert len(await ids(fiona, ROWS)) == 3
        assert await fiona.evaluate(KEPT, ROWS) == [i for i in kept if i != slots["EXP-C1"]]
        assert "New work arrived" in await fiona.locator("#live").inner_text()
        assert "EXP-C4" in await fiona.locator("table.inbox").inner_text()
        await _shot(fiona, "inbox-patched")


async def test_an_empty_inbox_shows_work_that_arrives(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    async with serving(services) as base, chromium() as browser:
        fiona = await _signed_in(browser, base, people["fiona"])
        await fiona.wait_for_selector("html[data-live=on]")
        assert await fiona.locator("#empty").is_visible()
        await w.start_expense(client, people["app"], "EXP-C9")
        await fiona.locator(ROWS).first.wait_for(timeout=5000)
        assert await fiona.locator("table.inbox").is_visible()
        assert not await fiona.locator("#empty").is_visible()


async def test_the_board_moves_only_the_card_a_change_names(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    moving = await _open_ticket(client, people, "T-301")
    await _open_ticket(client, people, "T-302")
    async with serving(services) as base, chromium() as browser:
        board = await _signed_in(browser, base, people["tara"])
        await board.goto(f"{base}/console/boards/support-ticket")
        await board.wait_for_selector("html[data-live=on]")
        cards = "article.card"
        open_lane = 'section[data-lane="open"]'
        assert await board.locator(f"{open_lane} {cards}").count() == 2
        await board.evaluate(TAG, cards)
        other = [i for i in await ids(board, cards) if i != relay.to_global_id("Run", moving)]

        response = await w.slot_named(client, people["sasha"], "first_response", "T-301")
        assert (await w.claim(client, people["sasha"], response["id"]))["__typename"] == (
            "SlotSuccess"
        )
        move = {
            "runId": relay.to_global_id("Run", moving),
            "move": "ask_customer",
            "input": {"question": "Which browser?"},
        }
        moved = (await gql(client, MOVE, {"input": move}, token=people["sasha"])).ok()["move"]
        assert moved["run"]["state"] == "waiting_for_customer", moved

        waiting = 'section[data-lane="waiting_for_customer"]'
        await board.wait_for_selector(f'{waiting} article[data-run="{moving}"]', timeout=5000)
        assert await board.locator(f"{open_lane} {cards}").count() == 1
        # The card that did not change is the node it was; the moved one is new.
        assert await board.evaluate(KEPT, cards) == other
        assert await board.locator(f"{open_lane} [data-count]").inner_text() == "(1)"
        assert await board.locator(f"{waiting} [data-count]").inner_text() == "(1)"
        assert await board.locator(f"{waiting} [data-empty]").count() == 0
        assert "may no longer apply" in await board.locator("#live").inner_text()
        await _shot(board, "board-patched")
