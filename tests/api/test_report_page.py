"""The /reports/sla page and its CSV, as a manager's browser and spreadsheet see them."""

from __future__ import annotations

import csv
import dataclasses
import io

import httpx
import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.service.common.container import Services
from tests import reports_dataset as ds

pytestmark = pytest.mark.anyio

#: What a browser sends with the page's own forms.
SAME = {"Origin": "http://taskflow.test"}
QUERY = {
    "from": "2026-11-23",
    "zone": "uk-london",
    "group": "workflow",
    "period": "week",
}


async def test_sign_in_with_a_token_then_read_the_page(
    client: httpx.AsyncClient, people: dict[str, str], loaded: dict[str, str]
) -> None:
    first = await client.get("/reports/sla")
    assert first.status_code == 401
    assert 'action="/reports/sign-in"' in first.text
    wrong = await client.post("/reports/sign-in", data={"token": "not-a-token"}, headers=SAME)
    assert wrong.status_code == 401
    assert "not valid" in wrong.text
    signed = await client.post("/reports/sign-in", data={"token": people["max"]}, headers=SAME)
    assert signed.status_code == 303
    assert signed.headers["location"] == "/reports/sla"
    set_cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in set_cookie
    assert "SameSite=strict" in set_cookie
    assert "Path=/reports" in set_cookie
    page = await client.get("/reports/sla", params=QUERY)
    assert page.status_code == 200, page.text
    html = page.text
    assert "<script" not in html
    assert html.count("<svg") == 3
    assert "Breach rate per week and workflow" in html
    # The expense row: 5 opened, 2 met, 2 breached, 50 %, pickup p50 1h 30m business.
    assert '<td class="key">expense-approval</td><td>5</td><td>2</td><td>2</td><td>2</td>' in html
    assert "<td>50.0 %</td>" in html
    assert '<div class="kpi risk"><b>1</b>at risk now</div>' in html
    # The expense workflow has one slot at risk and one breached now: counted in words.
    assert ">1 slot</text>" in html
    assert "1 slots" not in html
    out = await client.post("/reports/sign-out", headers=SAME)
    assert out.status_code == 303
    assert (await client.get("/reports/sla")).status_code == 401


async def test_the_csv_has_the_same_numbers(
    client: httpx.AsyncClient, people: dict[str, str], loaded: dict[str, str]
) -> None:
    headers = {"Authorization": f"Bearer {people['ada']}"}
    response = await client.get("/reports/sla.csv", params=QUERY, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [r["workflow"] for r in rows] == [ds.EXPENSE, ds.VENDOR]
    expense = rows[0]
    assert (expense["opened"], expense["met"], expense["breached"]) == ("5", "2", "2")
    assert expense["breach rate"] == "0.5000"
    # Pickups 2.5, 0.5, 0.5, 3 business hours (S1, S2, S4, S5): median 1.5.
    assert expense["pickup p50 (business h)"] == "1.50"
    assert expense["lead time, sum (real h)"] == "155.00"
    assert rows[1]["completion p50 (business h)"] == "4.00"

    periods = await client.get(
        "/reports/sla.csv", params={**QUERY, "group": ["period", "workflow"]}, headers=headers
    )
    table = list(csv.DictReader(io.StringIO(periods.text)))
    assert [(r["period"], r["workflow"], r["opened"]) for r in table] == [
        ("2026-11-23", ds.EXPENSE, "4"),
        ("2026-11-23", ds.VENDOR, "1"),
        ("2026-11-30", ds.EXPENSE, "1"),
        ("2026-11-30", ds.VENDOR, "0"),
    ]


async def test_staff_and_bad_input(
    client: httpx.AsyncClient, people: dict[str, str], loaded: dict[str, str]
) -> None:
    staff = {"Authorization": f"Bearer {people['fiona']}"}
    page = await client.get("/reports/sla", headers=staff)
    assert page.status_code == 403
    assert "manager grant" in page.text
    csv_refused = await client.get("/reports/sla.csv", headers=staff)
    assert csv_refused.status_code == 403
    assert (await client.get("/reports/sla.csv")).status_code == 401
    lead = {"Authorization": f"Bearer {people['leah']}"}
    bad = await client.get("/reports/sla", params={"from": "yesterday"}, headers=lead)
    assert bad.status_code == 400
    assert "from must be a date" in bad.text


async def test_after_the_demo_and_a_moved_clock_the_page_has_something_to_say(
    client: httpx.AsyncClient, services: Services, frozen_clock: object
) -> None:
    from datetime import timedelta

    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.clock import FrozenClock
    from taskflow.service.operate import demo

    assert isinstance(frozen_clock, FrozenClock)
    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)
    # Three working days later nothing was touched: clocks ran out on the open work.
    frozen_clock.advance(timedelta(days=3))
    token = services.staff_tokens.mint("max", frozen_clock.now())
    headers = {"Authorization": f"Bearer {token}"}
    params = {"from": "2026-11-30", "period": "day", "group": "workflow", "zone": "uk-london"}
    page = await client.get("/reports/sla", params=params, headers=headers)
    assert page.status_code == 200
    # The breach rate of the day the runs opened is plotted; the times chart has bars.
    assert "<circle" in page.text
    assert " h</text>" in page.text
    table = await client.get(
        "/reports/sla.csv", params={**params, "group": "workflow"}, headers=headers
    )
    rows = {r["workflow"]: r for r in csv.DictReader(io.StringIO(table.text))}
    # The vendor's security assessment is a child run of its own workflow, measured as one.
    # Every workflow whose slots the demo opened, the hires' requests and undos among them.
    assert (
        {
            "expense-approval",
            "security-assessment",
            "support-ticket",
            "vendor-onboarding",
            "laptop-request",
            "accounts-request",
            "badge-request",
            "laptop-return",
            "accounts-closure",
        }
        <= set(rows)
        <= {*services.catalog.names()}
    )
    assert sum(int(r["opened"]) for r in rows.values()) >= 12
    assert sum(int(r["breached"]) for r in rows.values()) > 0
    assert sum(int(r["breached now"]) for r in rows.values()) > 0


async def test_the_page_shows_insights_per_workflow_version(
    client: httpx.AsyncClient, services: Services, frozen_clock: object
) -> None:
    """Below the SLA table: a row per workflow version with its counts, percentiles (their
    sample size when few), breach and failure rates; the window is the form's choice."""
    import re

    from taskflow.cli import insights_cmd
    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.service.history import insights
    from taskflow.service.operate import demo

    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)
    token = services.staff_tokens.mint("max", services.clock.now())
    headers = {"Authorization": f"Bearer {token}"}
    page = await client.get("/reports/sla", params={"insights": "30d"}, headers=headers)
    assert page.status_code == 200
    section = page.text[page.text.index('<h2 id="insights">') :]
    assert "Runs over the last 30d" in section
    assert "<option selected>30d</option>" in page.text
    rows = re.findall(r"<tr(?: class=\"regression\")?>\s*(.*?)</tr>", section, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    shown = {(c[0], c[1]): c for c in cells if len(c) == 12}
    assert ("expense-approval", "v1") in shown, shown.keys()
    expense = shown[("expense-approval", "v1")]
    # The same counts the insights query gives (an admin reads every workflow).
    found = await insights.insights(services, insights_cmd.OPERATOR, "30d", "expense-approval")
    (row,) = [r for r in found.rows if r.version == 1]
    counts = (row.live, row.started, row.finished, row.cancelled, row.failed)
    assert [int(n) for n in expense[2:7]] == list(counts)
    finished, cancelled, failed = row.finished, row.cancelled, row.failed
    assert finished > 0
    # Percentiles over fewer than 20 runs carry their number; rates are whole percents.
    assert re.fullmatch(r"[\d.]+[smhd] / [\d.]+[smhd] / [\d.]+[smhd](?: \(n=\d+\))?", expense[7])
    if finished < 20:
        assert expense[7].endswith(f"(n={finished})")
    assert re.fullmatch(r"\d+%|-", expense[9])
    assert expense[10] == f"{100 * failed / (finished + cancelled):.0f}%"

    bad = await client.get("/reports/sla", params={"insights": "2w"}, headers=headers)
    assert bad.status_code == 400
    assert "Unknown window" in bad.text


def _table(page: str, anchor: str) -> list[list[str]]:
    """The body cells of the table after the heading ``anchor``, row by row (tags dropped)."""
    import re

    html = page[page.index(f'<h2 id="{anchor}">') :]
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in row] for row in cells]


async def test_the_page_shows_a_workflows_pipeline_and_funnel(
    client: httpx.AsyncClient, services: Services, people: dict[str, str]
) -> None:
    """Below the rows per version: the chosen workflow's states (runs there now, time in
    state, reopened, pickup, refused) and the funnel of the runs started in the window, the
    same figures as the insights query, sample sizes beside the small ones."""
    from taskflow.cli import insights_cmd
    from taskflow.cli.demo_cmd import PRINCIPALS, RUNS
    from taskflow.core.history import insight_text as said
    from taskflow.service.history import insights
    from taskflow.service.operate import demo

    records, data = demo.read(PRINCIPALS, RUNS)
    await demo.seed(services, records, data)
    token = services.staff_tokens.mint("max", services.clock.now())
    headers = {"Authorization": f"Bearer {token}"}
    asked = {"insights": "30d", "workflow": "expense-approval"}
    page = await client.get("/reports/sla", params=asked, headers=headers)
    assert page.status_code == 200
    assert "<option selected>expense-approval</option>" in page.text
    assert '<h2 id="pipeline">Pipeline of expense-approval</h2>' in page.text
    found = await insights.insights(services, insights_cmd.OPERATOR, "30d", "expense-approval")
    assert found.pipeline
    assert found.funnel
    pipeline = {row[0]: row for row in _table(page.text, "pipeline")}
    assert list(pipeline) == [s.state for s in found.pipeline]
    for s in found.pipeline:
        shown = pipeline[s.state]
        assert shown[1] == str(s.live)
        assert shown[2] == said.percentiles(s.took, s.samples, 2)
        assert shown[3] == said.rate_of(s.reopened, s.samples)
        assert shown[4] == said.percentiles(s.pickup, s.picked, 2)
        assert shown[6] == said.rate_of(s.refused, s.slots)
        # The demo's month is a few dozen runs: small samples say how small.
        if 0 < s.samples < said.FEW:
            assert shown[2].endswith(f"(n={s.samples})")
            assert shown[3].endswith(f"(n={s.samples})")
    funnel = _table(page.text, "funnel")
    started = found.funnel[0].reached
    assert [row[0] for row in funnel] == [f.state for f in found.funnel]
    for row, f in zip(funnel, found.funnel, strict=True):
        assert row[1:] == [
            str(f.reached),
            f"{100 * f.reached / started:.0f}%",
            str(f.live),
            str(f.completed),
            str(f.cancelled),
        ]
    assert funnel[0][2] == "100%"  # every run started in the initial state

    # Without a choice, the first workflow listed; its name is selected in the form.
    plain = await client.get("/reports/sla", params={"insights": "30d"}, headers=headers)
    first = sorted(
        {r.workflow for r in (await insights.insights(services, insights_cmd.OPERATOR, "30d")).rows}
    )[0]
    assert f'<h2 id="pipeline">Pipeline of {first}</h2>' in plain.text
    assert f"<option selected>{first}</option>" in plain.text

    # An unknown workflow is a 400 page naming the known ones; one the reader does not
    # oversee whole is refused, as the insights query refuses it.
    unknown = await client.get(
        "/reports/sla", params={"workflow": "expense-aproval"}, headers=headers
    )
    assert unknown.status_code == 400
    assert "No workflow is called &#39;expense-aproval&#39;" in unknown.text
    lead = {"Authorization": f"Bearer {people['leah']}"}
    refused = await client.get(
        "/reports/sla", params={"workflow": "vendor-onboarding"}, headers=lead
    )
    assert refused.status_code == 403
    assert "need a lead or manager grant on the whole workflow" in refused.text


async def test_an_insights_window_before_the_runs_kept_is_a_page_naming_the_retention(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> None:
    """Runs kept 3 days: the insights over 7 days (the page's default) would count pruned
    runs as never started, so the page says why instead (GraphQL refuses the same window
    with OUTSIDE_RETENTION); 24 hours are answered."""
    from tests.conftest import asgi_client, gql, services_with, tokens_for

    kept = dataclasses.replace(settings, retention_days=3)
    async with (
        services_with(database_url, kept, frozen_clock) as services,
        asgi_client(services) as client,
    ):
        token = tokens_for(services)["max"]
        headers = {"Authorization": f"Bearer {token}"}
        page = await client.get("/reports/sla", headers=headers)
        assert page.status_code == 400
        assert "Ended runs are kept 3 days" in page.text
        assert (
            await client.get("/reports/sla", params={"insights": "24h"}, headers=headers)
        ).status_code == 200
        query = "query($w: InsightsWindow) { insights(window: $w) { since } }"
        refused = await gql(client, query, {"w": "WEEK"}, token=token)
        assert refused.error_codes == ["OUTSIDE_RETENTION"]
        assert refused.errors[0]["extensions"]["facts"]["retention_days"] == 3
        assert (await gql(client, query, {"w": "DAY"}, token=token)).ok()["insights"]["since"]
