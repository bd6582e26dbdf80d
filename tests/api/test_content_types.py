"""Content types of pages (issue 16.11): HEAD answers like GET; charset named once."""

from __future__ import annotations

import httpx
import pytest

from tests.api import magic as m

pytestmark = pytest.mark.anyio

HTML = "text/html; charset=utf-8"


async def test_a_link_page_answers_html_to_get_and_head_alike(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    link, _, _ = await m.vendor_link(client, people)
    path = m.path_of(link["url"])
    shown = await client.get(path)
    headed = await client.head(path)
    assert shown.status_code == headed.status_code == 200
    assert shown.headers["content-type"] == HTML
    assert headed.headers["content-type"] == HTML
    gone = await client.head("/l/not-a-token")
    assert gone.status_code == 410
    assert gone.headers["content-type"] == HTML


async def test_report_pages_name_their_charset_once(client: httpx.AsyncClient) -> None:
    page = await client.get("/reports/sla")
    assert page.headers["content-type"] == HTML
    csv = await client.get("/reports/sla.csv")
    assert csv.headers["content-type"].count("charset") <= 1
