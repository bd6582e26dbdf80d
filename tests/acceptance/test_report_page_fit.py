"""The report page at 1280 px: the table fits (or the reader narrows its columns), the From
box says where the report began, and a summed lead time says it is a sum.

Before: the From box was empty with a fixed placeholder (2026-11-01) whatever window the
report used, the table ran off a 1280 px screen with no way to narrow it, and "lead time"
was a sum over slots labelled as if it were one slot's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow.service.common.container import Services
from tests.acceptance.test_report_browser import report_page

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_report_fits_1280_px_and_shows_its_window(
    services: Services, people: dict[str, str], loaded: dict[str, str], tmp_path: Path
) -> None:
    async with report_page(services) as (base, page):
        await page.set_extra_http_headers({"Authorization": f"Bearer {people['max']}"})
        # The default window: eight weeks back from "now" (2026-12-01), as the box says.
        await page.goto(f"{base}/reports/sla?group=period&group=workflow")
        assert await page.input_value("input[name=from]") == "2026-10-06"
        # The default columns fit: no sideways scroll at 1280 px.
        fits = await page.evaluate(
            "() => { const s = document.querySelector('.scroll');"
            " return [s.scrollWidth, s.clientWidth, document.documentElement.scrollWidth]; }"
        )
        await page.screenshot(path=str(tmp_path / "report-1280.png"), full_page=True)
        assert fits[0] <= fits[1], f"the table is wider than its box: {fits}"
        assert fits[2] <= 1280, f"the page scrolls sideways: {fits}"
        # Fewer columns, on the reader's pick.
        await page.goto(f"{base}/reports/sla?from=2026-11-23&group=workflow&cols=counts")
        assert await page.input_value("input[name=from]") == "2026-11-23"
        heads = await page.locator("thead th").all_inner_texts()
        assert "opened" in heads
        assert not any("p90" in h for h in heads)
        await page.goto(f"{base}/reports/sla?group=workflow&cols=counts&cols=lead")
        heads = await page.locator("thead th").all_inner_texts()
        assert "lead time" in heads
        assert "sum over the slots (real h)" in heads
        assert await page.get_attribute("th[title^='lead time']", "title") == (
            "lead time, sum (real h)"
        )
