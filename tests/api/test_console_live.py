"""The console's live socket /console/live: the inbox subscription for the principal of the
console session (no token in the page), refused from another site or without a session,
closed when the session ends. (Refused upgrades: tests/acceptance/test_console_browser.py,
over a real socket.)"""

from __future__ import annotations

import httpx
import pytest
from httpx_ws import aconnect_ws

from taskflow.service.access import report_sessions
from taskflow.service.common import container
from tests.api import live as lv
from tests.api import workflows as w

pytestmark = pytest.mark.anyio

SAME = {"Origin": "http://taskflow.test"}


async def _signed_in(client: httpx.AsyncClient, token: str) -> None:
    signed = await client.post("/console/sign-in", data={"token": token}, headers=SAME)
    assert signed.status_code == 303


async def test_the_session_socket_hears_a_slot_leave_and_closes_on_sign_out(
    services: container.Services, people: dict[str, str]
) -> None:
    async with lv.app_client(services, recheck_interval=0.1) as client:
        await _signed_in(client, people["frank"])  # the page's sign-in: no token kept
        await w.start_expense(client, people["app"], "EXP-LIVE-1")
        slot = await w.slot_named(client, people["frank"], "finance_review", "EXP-LIVE-1")
        async with aconnect_ws(
            "/console/live", client, subprotocols=[lv.PROTOCOL], headers=SAME
        ) as ws:
            frank = lv.Live(ws)
            await frank.send({"type": "connection_init", "payload": {}})
            assert (await frank.next())["type"] == "connection_ack"
            await frank.subscribe("1", lv.INBOX)
            await lv.subscribed(client.services, 1)  # type: ignore[attr-defined]
            await w.claim(client, people["fiona"], slot["id"])
            change = (await frank.next())["payload"]["data"]["inboxChanged"]
            assert change["slotId"] == slot["id"]
            assert change["slot"] is None  # gone from his inbox: Fiona holds it
            # Signed out (here: the session ended on the server, as sign-out ends it).
            own = client.services  # type: ignore[attr-defined]
            assert await report_sessions.sign_out(own, client.cookies["taskflow_console_session"])
            await lv.closes(frank, 4403)
