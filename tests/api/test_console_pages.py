"""The staff console at /console: sign-in through the report session, my inbox only,
actions through the slot use cases with typed refusals, and no form from another site."""

from __future__ import annotations

import re

import httpx
import pytest

from taskflow.service.common.container import Services
from tests.api import workflows as w
from tests.conftest import asgi_client

pytestmark = pytest.mark.anyio

SAME = {"Origin": "http://taskflow.test"}
ELSEWHERE = {"Origin": "https://evil.example"}


async def _sign_in(client: httpx.AsyncClient, token: str) -> None:
    signed = await client.post("/console/sign-in", data={"token": token}, headers=SAME)
    assert signed.status_code == 303, signed.text
    assert signed.headers["location"] == "/console"
    cookie = signed.headers["set-cookie"]
    assert "taskflow_console_session=" in cookie
    assert token not in cookie
    assert "Path=/console" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie


def _slot_ids(html: str) -> list[str]:
    return re.findall(r'<tr id="slot-([0-9a-f-]+)"', html)


async def test_no_page_without_sign_in(client: httpx.AsyncClient, people: dict[str, str]) -> None:
    for path in ("/console", "/console/slots/00000000-0000-0000-0000-000000000000"):
        page = await client.get(path)
        assert page.status_code == 401
        assert 'action="/console/sign-in"' in page.text
        assert "Content-Security-Policy" in page.headers
    wrong = await client.post("/console/sign-in", data={"token": "nope"}, headers=SAME)
    assert wrong.status_code == 401
    assert "not valid" in wrong.text
    claim = await client.post("/console/claim-next", headers=SAME)
    assert claim.status_code == 401
    assert 'action="/console/sign-in"' in claim.text


async def test_a_principal_sees_only_their_inbox_and_claims_from_it(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-001")
    await w.start_expense(client, people["app"], "EXP-002")
    async with asgi_client(services) as frank, asgi_client(services) as paul:
        await _sign_in(client, people["fiona"])
        await _sign_in(frank, people["frank"])
        await _sign_in(paul, people["paul"])
        mine = await client.get("/console")
        assert mine.status_code == 200, mine.text
        slots = _slot_ids(mine.text)
        assert len(slots) == 2
        assert "Review expense EXP-001" in mine.text
        assert "Nothing waits for you now." in (await paul.get("/console")).text
        # Paul cannot open a slot of a run he may not read (the same answer as no slot).
        assert (await paul.get(f"/console/slots/{slots[0]}")).status_code == 404
        # Fiona claims from her inbox; the slot leaves Frank's.
        claimed = await client.post(
            f"/console/slots/{slots[0]}/claim", data={"_back": "/console"}, headers=SAME
        )
        assert claimed.status_code == 303
        assert claimed.headers["location"] == "/console"
        assert _slot_ids((await frank.get("/console")).text) == [slots[1]]
        assert "held by you" in (await client.get("/console")).text
        # Frank tries anyway: the typed refusal, nothing changed.
        late = await frank.post(f"/console/slots/{slots[0]}/claim", headers=SAME)
        assert late.status_code == 409
        assert re.search(r'role="alert" id="refusal"><code>[A-Z_]+</code>: ', late.text)
        assert "held by fiona" in late.text


async def test_complete_shows_the_apis_validation_then_completes(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-003")
    await _sign_in(client, people["fiona"])
    nxt = await client.post("/console/claim-next", headers=SAME)
    assert nxt.status_code == 303
    page = await client.get(nxt.headers["location"])
    assert '<label for="f-decision">Decision (required)</label>' in page.text
    assert '<label for="f-comment">Comment</label>' in page.text
    bad = await client.post(
        nxt.headers["location"] + "/complete", data={"comment": "hm"}, headers=SAME
    )
    assert bad.status_code == 422
    assert 'class="field-error" id="e-decision"' in bad.text
    assert 'value="hm"' in bad.text  # what was typed is kept
    done = await client.post(
        nxt.headers["location"] + "/complete",
        data={"decision": "approve", "_back": "/console"},
        headers=SAME,
    )
    assert done.status_code == 303, done.text
    assert "Nothing waits for you now." in (await client.get("/console")).text


async def test_forms_from_another_site_are_refused(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-004")
    # Login CSRF: another site's sign-in form opens no session.
    forged = await client.post(
        "/console/sign-in", data={"token": people["fiona"]}, headers=ELSEWHERE
    )
    assert forged.status_code == 403
    assert "set-cookie" not in forged.headers
    await _sign_in(client, people["fiona"])
    [slot] = _slot_ids((await client.get("/console")).text)
    for path in (f"/console/slots/{slot}/claim", "/console/claim-next", "/console/sign-out"):
        assert (await client.post(path, headers=ELSEWHERE)).status_code == 403
        assert (await client.post(path)).status_code == 403  # neither Origin nor Referer
    assert "held by" not in (await client.get("/console")).text


async def test_the_report_and_console_sessions_are_one_mechanism(
    services: Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await _sign_in(client, people["fiona"])
    async with services.db.connection() as conn:
        assert await conn.fetchval("SELECT principal FROM report_session") == "fiona"
    out = await client.post("/console/sign-out", headers=SAME)
    assert out.status_code == 303
    assert (await client.get("/console")).status_code == 401
