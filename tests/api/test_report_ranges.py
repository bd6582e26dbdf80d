"""Report windows are bounded: far-away or huge ranges get a refusal naming the bound,
never a 500 (OverflowError) and never calendars materialised for centuries."""

from __future__ import annotations

import httpx
import pytest

from taskflow.service.common.container import Services
from tests.conftest import gql

pytestmark = pytest.mark.anyio

REPORT = """query($from: DateTime!, $to: DateTime) {
  slaReport(from: $from, to: $to) { rows { opened } }
}"""
SAME = {"Origin": "http://taskflow.test"}


@pytest.mark.parametrize(
    ("start", "end", "says"),
    [
        ("0001-01-01T00:00:00+00:00", None, "no earlier than"),
        ("0001-01-01T00:00:00+14:00", "0001-01-02T00:00:00+00:00", "no earlier than"),
        ("2026-11-01T00:00:00+00:00", "9999-12-31T23:59:59-12:00", "no later than"),
        ("1900-01-01T00:00:00+00:00", "2299-12-31T00:00:00+00:00", "no earlier than"),
        ("2010-01-01T00:00:00+00:00", "2026-11-01T00:00:00+00:00", "at most 1830 days"),
    ],
)
async def test_sla_report_refuses_windows_out_of_bounds(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: Services,
    start: str,
    end: str | None,
    says: str,
) -> None:
    result = await gql(client, REPORT, {"from": start, "to": end}, token=people["ada"])
    assert result.status == 200
    assert result.error_codes == ["INVALID_INPUT"], result.errors
    assert says in result.errors[0]["message"]
    async with services.db.connection() as conn:
        years = await conn.fetchval("SELECT max(stop_year) - min(first_year) FROM calendar_span")
    assert years is None or years <= 10


async def test_a_five_year_report_is_answered(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    result = await gql(client, REPORT, {"from": "2022-01-01T00:00:00+00:00"}, token=people["ada"])
    assert result.ok()["slaReport"]["rows"] is not None


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("0001-01-01", None),
        ("0001-01-01", "0001-01-02"),
        ("2026-11-01", "9999-12-31"),
        ("9999-12-31", "9999-12-31T23:59:59-12:00"),
        ("1900-01-01", "2299-12-31"),
    ],
)
async def test_the_report_page_refuses_them_too(
    client: httpx.AsyncClient, people: dict[str, str], start: str, end: str | None
) -> None:
    await client.post("/reports/sign-in", data={"token": people["ada"]}, headers=SAME)
    params = {"from": start, "zone": "uk-london", **({"to": end} if end else {})}
    page = await client.get("/reports/sla", params=params)
    assert page.status_code == 400, page.text[:300]
    assert "no earlier than" in page.text or "no later than" in page.text or "at most" in page.text
    csv = await client.get(
        "/reports/sla.csv", params=params, headers={"Authorization": f"Bearer {people['ada']}"}
    )
    assert csv.status_code == 400
