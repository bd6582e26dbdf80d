"""The report page's sign-in: its own short-lived session, revoked on sign-out, and no
form accepted from another site (login CSRF)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow import clock
from taskflow.api import app as api_app
from taskflow.service.common.container import Services

pytestmark = pytest.mark.anyio

SAME = {"Origin": "http://taskflow.test"}


async def _sign_in(client: httpx.AsyncClient, token: str) -> httpx.Response:
    signed = await client.post("/reports/sign-in", data={"token": token}, headers=SAME)
    assert signed.status_code == 303, signed.text
    return signed


async def test_the_cookie_holds_a_session_not_the_api_token(
    client: httpx.AsyncClient, people: dict[str, str], services: Services
) -> None:
    signed = await _sign_in(client, people["max"])
    set_cookie = signed.headers["set-cookie"]
    assert people["max"] not in set_cookie
    assert "taskflow_report_session=" in set_cookie
    assert "HttpOnly" in set_cookie
    assert "SameSite=strict" in set_cookie
    assert "Max-Age=28800" in set_cookie  # 8 hours, not the token's 30 days
    assert "Secure" not in set_cookie  # the public URL is plain http
    session = client.cookies["taskflow_report_session"]
    async with services.db.connection() as conn:
        row = await conn.fetchrow("SELECT * FROM report_session")
    assert row["principal"] == "max"
    assert session not in row["id"]  # only its hash is stored
    assert row["expires_at"] - row["created_at"] == timedelta(hours=8)
    assert (await client.get("/reports/sla")).status_code == 200


async def test_sign_out_revokes_the_session_on_the_server(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _sign_in(client, people["max"])
    stolen = client.cookies["taskflow_report_session"]
    out = await client.post("/reports/sign-out", headers=SAME)
    assert out.status_code == 303
    # A copy of the cookie taken before sign-out no longer opens the page.
    assert "taskflow_report_session" not in client.cookies
    replay = await client.get(
        "/reports/sla", headers={"Cookie": f"taskflow_report_session={stolen}"}
    )
    assert replay.status_code == 401
    assert 'action="/reports/sign-in"' in replay.text


async def test_the_session_expires(
    client: httpx.AsyncClient, people: dict[str, str], frozen_clock: clock.FrozenClock
) -> None:
    await _sign_in(client, people["max"])
    frozen_clock.advance(timedelta(hours=7, minutes=59))
    assert (await client.get("/reports/sla")).status_code == 200
    frozen_clock.advance(timedelta(minutes=2))
    assert (await client.get("/reports/sla")).status_code == 401


async def test_an_api_token_in_the_cookie_is_not_a_session(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    for name in ("taskflow_report_session", "taskflow_report_token"):
        page = await client.get("/reports/sla", headers={"Cookie": f"{name}={people['max']}"})
        assert page.status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Referer": "https://evil.example/login-csrf.html"},
        {},
    ],
)
async def test_sign_in_and_out_refuse_forms_from_another_site(
    client: httpx.AsyncClient, people: dict[str, str], services: Services, headers: dict[str, str]
) -> None:
    forged = await client.post("/reports/sign-in", data={"token": people["ada"]}, headers=headers)
    assert forged.status_code == 403
    assert "not sent from taskflow's own report page" in forged.text
    assert "set-cookie" not in forged.headers
    async with services.db.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM report_session") == 0
    await _sign_in(client, people["max"])
    out = await client.post("/reports/sign-out", headers=headers)
    assert out.status_code == 403
    assert (await client.get("/reports/sla")).status_code == 200


async def test_same_site_forms_by_referer_or_the_request_host(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    by_referer = {"Referer": "http://taskflow.test/reports/sla?from=2026-11-01"}
    signed = await client.post(
        "/reports/sign-in", data={"token": people["max"]}, headers=by_referer
    )
    assert signed.status_code == 303
    # Opened under another name than the public URL (localhost vs 127.0.0.1): its own host.
    other = {"Origin": "http://localhost:8000", "Host": "localhost:8000"}
    signed = await client.post("/reports/sign-in", data={"token": people["max"]}, headers=other)
    assert signed.status_code == 303


@pytest.fixture
async def https_client(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    settings = dataclasses.replace(services.settings, public_url="https://reports.example")
    application = api_app.create_app(services=dataclasses.replace(services, settings=settings))
    transport = ASGIWebSocketTransport(application)
    async with httpx.AsyncClient(transport=transport, base_url="https://reports.example") as http:
        yield http


async def test_the_cookie_is_secure_when_served_over_https(
    https_client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    signed = await https_client.post(
        "/reports/sign-in",
        data={"token": people["max"]},
        headers={"Origin": "https://reports.example"},
    )
    assert signed.status_code == 303
    assert "Secure" in signed.headers["set-cookie"]


async def test_signing_in_again_ends_the_previous_session(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _sign_in(client, people["max"])
    first = client.cookies["taskflow_report_session"]
    await _sign_in(client, people["ada"])
    assert client.cookies["taskflow_report_session"] != first
    client.cookies.clear()
    old = await client.get("/reports/sla", headers={"Cookie": f"taskflow_report_session={first}"})
    assert old.status_code == 401


async def test_a_deactivated_principal_loses_the_page_at_once(
    client: httpx.AsyncClient, people: dict[str, str], services: Services
) -> None:
    await _sign_in(client, people["max"])
    assert (await client.get("/reports/sla")).status_code == 200
    async with services.db.connection() as conn:
        await conn.execute("UPDATE principal SET active = false WHERE id = 'max'")
    assert (await client.get("/reports/sla")).status_code == 401


async def test_signing_out_everywhere_ends_the_report_session_too(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _sign_in(client, people["max"])
    assert (await client.get("/reports/sla")).status_code == 200
    signed_out = await client.post(
        "/graphql",
        json={
            "query": "mutation { signOutEverywhere(input: {}) { __typename } }",
        },
        headers={"Authorization": f"Bearer {people['max']}"},
    )
    assert signed_out.json()["data"]["signOutEverywhere"]["__typename"] != "NotAllowed"
    # The page's own session ended with the tokens it was opened with.
    assert (await client.get("/reports/sla")).status_code == 401


async def test_a_session_ends_with_the_token_it_was_opened_with(
    client: httpx.AsyncClient,
    services: Services,
    people: dict[str, str],
    frozen_clock: clock.FrozenClock,
) -> None:
    hour_token = services.staff_tokens.mint("max", frozen_clock.now(), timedelta(hours=1))
    signed = await _sign_in(client, hour_token)
    # The browser forgets the cookie when the token ends, not eight hours later.
    assert "Max-Age=3600" in signed.headers["set-cookie"]
    async with services.db.connection() as conn:
        row = await conn.fetchrow("SELECT * FROM report_session")
    assert row["expires_at"] - row["created_at"] == timedelta(hours=1)
    frozen_clock.advance(timedelta(minutes=59))
    assert (await client.get("/reports/sla")).status_code == 200
    frozen_clock.advance(timedelta(minutes=2))
    page = await client.get("/reports/sla")
    assert page.status_code == 401
    assert 'action="/reports/sign-in"' in page.text
