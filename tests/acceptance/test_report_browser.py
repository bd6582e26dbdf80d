"""A manager signs in to the SLA report page in headless Chromium and sees the charts.

Debian's ``chromium`` (installed by ``.ci/run``) driven by Playwright's async
API; the app is served by uvicorn on the test's own event loop, so it shares
the test's database pool and FrozenClock (the hand-built data set of
tests/reports_dataset.py, "now" Tuesday 2026-12-01 09:00Z).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvicorn
from playwright.async_api import Page, async_playwright

from taskflow.api import app as api_app
from taskflow.service.common.container import Services
from tests.acceptance.conftest import free_port
from tests.acceptance.test_magic_link_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@contextlib.asynccontextmanager
async def serving(services: Services) -> AsyncIterator[str]:
    port = free_port()
    config = uvicorn.Config(
        api_app.create_app(services=services), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 (uvicorn exposes a flag, not an event)
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def report_page(services: Services) -> AsyncIterator[tuple[str, Page]]:
    """The app served and a 1280 x 900 page of headless Chromium: (the base URL, the page)."""
    async with serving(services) as base, async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield base, await browser.new_page(viewport={"width": 1280, "height": 900})
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def after_the_demo(services: Services) -> AsyncIterator[tuple[str, Page]]:
    """``taskflow demo``'s history seeded, and Max (a manager) signed in to the report page
    in Chromium: (the base URL, the page)."""
    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.service.operate import demo

    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)
    token = services.staff_tokens.mint("max", services.clock.now())
    async with report_page(services) as (base, page):
        await page.goto(f"{base}/reports/sla")
        await page.fill("#token", token)
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{base}/reports/sla")
        yield base, page


def screenshot_path(name: str) -> Path:
    """Where a test's screenshot for docs/ goes (the CI keeps the artifacts folder)."""
    import os

    shots = Path(os.environ.get("TASKFLOW_ARTIFACTS_DIR", "build/artifacts")) / "reports"
    shots.mkdir(parents=True, exist_ok=True)
    return shots / name


async def test_report_page_in_chromium(
    services: Services, people: dict[str, str], loaded: dict[str, str], tmp_path: Path
) -> None:
    async with report_page(services) as (base, page):
        await page.goto(f"{base}/reports/sla")
        assert await page.locator("h1").inner_text() == "SLA report: sign in"
        await page.fill("#token", people["max"])
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{base}/reports/sla")
        # The browser keeps a session id, never the API token (its sign-in form passed
        # the same-site check: Chromium sends Origin with the page's own POST).
        [cookie] = await page.context.cookies()
        assert cookie["name"] == "taskflow_report_session"
        assert cookie["value"] != people["max"]
        assert cookie["httpOnly"]
        assert cookie["sameSite"] == "Strict"
        await page.goto(
            f"{base}/reports/sla?from=2026-11-23&zone=uk-london&period=day&group=audience"
        )
        assert await page.locator("svg.chart").count() == 3
        assert await page.locator(".kpi.risk b").inner_text() == "1"
        assert await page.locator(".kpi.bad b").inner_text() == "1"
        legend = await page.locator("svg.chart").first.text_content() or ""
        assert "role:finance" in legend
        assert "group:emea" in legend
        # The SLA table's rows (the insights, pipeline and funnel tables below have their own).
        rows = await page.locator("table.sla tbody tr").count()
        assert rows == 3
        shot = tmp_path / "sla-report.png"
        await page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 20_000
        # Printed, the filters go and the charts and table stay.
        await page.emulate_media(media="print")
        assert not await page.locator("form.filters").is_visible()
        assert await page.locator("table.sla").is_visible()
        assert await page.locator("table.insights").is_visible()
        pdf = await page.pdf(path=str(tmp_path / "sla-report.pdf"))
        assert len(pdf) > 10_000


async def test_the_insights_section_in_chromium(services: Services) -> None:
    """After the demo, a manager reads the insights per workflow version below the SLA table
    (the picture in docs/insights.md is this test's screenshot)."""
    async with after_the_demo(services) as (base, page):
        await page.goto(f"{base}/reports/sla?insights=30d")
        section = page.locator("table.insights")
        assert await section.is_visible()
        rows = await section.locator("tbody tr").all_inner_texts()
        assert any(r.startswith("expense-approval\tv1") for r in rows), rows
        assert any("(n=" in r for r in rows)
        path = screenshot_path("report-insights.png")
        await page.locator("#insights").scroll_into_view_if_needed()
        await section.screenshot(path=str(path))
        assert path.stat().st_size > 5_000


async def test_a_workflows_pipeline_and_funnel_in_chromium(services: Services) -> None:
    """After the demo, a manager picks a workflow in the form and reads its pipeline of
    states and its funnel below the insights rows (the picture in docs/insights.md is this
    test's screenshot)."""
    from taskflow.cli import insights_cmd
    from taskflow.service.history import insights

    async with after_the_demo(services) as (base, page):
        found = await insights.insights(services, insights_cmd.OPERATOR, "30d", "expense-approval")
        assert found.pipeline
        assert found.funnel
        await page.goto(f"{base}/reports/sla?insights=30d")
        # The form names the workflows listed; picking one shows its sections.
        await page.select_option("select[name=workflow]", "expense-approval")
        await page.click("form.filters button[type=submit]")
        await page.wait_for_url("**workflow=expense-approval**")
        assert await page.locator("#pipeline").inner_text() == "Pipeline of expense-approval"
        pipeline = await page.locator("table.pipeline tbody tr").all_inner_texts()
        assert [r.split("\t")[0] for r in pipeline] == [s.state for s in found.pipeline]
        assert any("(n=" in r for r in pipeline), pipeline  # a month of the demo is small
        funnel = await page.locator("table.funnel tbody tr").all_inner_texts()
        assert [r.split("\t")[0] for r in funnel] == [f.state for f in found.funnel]
        cells = [c.strip() for c in funnel[0].split("\t")]
        assert cells[1:3] == [str(found.funnel[0].reached), "100%"]
        sections = page.locator("#workflow-insights")
        assert await sections.is_visible()
        path = screenshot_path("report-pipeline-funnel.png")
        await sections.scroll_into_view_if_needed()
        await sections.screenshot(path=str(path))
        assert path.stat().st_size > 5_000
        # Printed, the sections stay.
        await page.emulate_media(media="print")
        assert await page.locator("table.pipeline").is_visible()
        assert await page.locator("table.funnel").is_visible()
