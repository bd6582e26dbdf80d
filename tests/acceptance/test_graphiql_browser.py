"""GraphiQL at /graphql works with no internet: every request stays on the server.

Strawberry's page loaded React and GraphiQL from unpkg.com, so a machine without
internet saw "Loading..." forever. Headless Chromium opens the page, every request
to another host is refused, and GraphiQL's editor must render and run a query.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Route, async_playwright

from taskflow.service.common.container import Services
from tests.acceptance.test_magic_link_browser import CHROMIUM, CHROMIUM_ARGS
from tests.acceptance.test_report_browser import serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_graphiql_renders_its_editor_offline(services: Services, tmp_path: Path) -> None:
    outside: list[str] = []
    async with serving(services) as base, async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            own = urlsplit(base).netloc

            async def only_ours(route: Route) -> None:
                url = route.request.url
                if urlsplit(url).netloc == own or url.startswith("data:"):
                    await route.continue_()
                else:
                    outside.append(url)
                    await route.abort()

            await page.route("**/*", only_ours)
            await page.goto(f"{base}/graphql", wait_until="networkidle")
            await page.locator(".graphiql-container .graphiql-query-editor").wait_for(timeout=15000)
            assert "Loading..." not in await page.locator("#graphiql").inner_text()
            assert await page.locator(".CodeMirror").count() >= 1
            await page.screenshot(path=str(tmp_path / "graphiql.png"))
        finally:
            await browser.close()
    assert outside == [], f"GraphiQL asked another host: {outside}"
