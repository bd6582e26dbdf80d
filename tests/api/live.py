"""A graphql-transport-ws client for the live tests: open, authenticate, subscribe, read."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.service.common import container
from taskflow.service.live import hub as live_hub

PROTOCOL = "graphql-transport-ws"
INBOX = """subscription Inbox($after: String) { inboxChanged(after: $after) {
  cursor slotId slot { id name status holder subject { externalId } } } }"""


class Live:
    """One socket: send protocol messages, read what the server sends."""

    def __init__(self, ws: AsyncWebSocketSession) -> None:
        self.ws = ws

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_text(json.dumps(message))

    async def subscribe(
        self, op_id: str, query: str, variables: dict[str, Any] | None = None
    ) -> None:
        payload = {"query": query, "variables": variables or {}}
        await self.send({"id": op_id, "type": "subscribe", "payload": payload})

    async def next(self, within: float = 2.0) -> dict[str, Any]:
        """The next message other than a ping (fails after ``within`` seconds)."""
        with anyio.fail_after(within):
            while True:
                message: dict[str, Any] = json.loads(await self.ws.receive_text())
                if message["type"] != "ping":
                    return message

    async def quiet(self, within: float = 0.5) -> list[dict[str, Any]]:
        """Whatever arrives within ``within`` seconds (pings left out)."""
        got: list[dict[str, Any]] = []
        with anyio.move_on_after(within):
            while True:
                message = json.loads(await self.ws.receive_text())
                if message["type"] != "ping":
                    got.append(message)
        return got


async def subscribed(services: container.Services, count: int) -> None:
    """Wait (at most 2 s) until the process's hub holds ``count`` subscriptions: the
    protocol acknowledges none, and a change before the subscription is not its to see."""
    hub = live_hub.hub_for(services)
    with anyio.fail_after(2):
        # Polled: the hub has no event to wait on for a test, and 10 ms steps are cheap.
        while sum(len(g.subscribers) for g in hub.groups.values()) < count:  # noqa: ASYNC110
            await anyio.sleep(0.01)


@contextlib.asynccontextmanager
async def app_client(services: container.Services, **live: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app whose live settings are ``live`` (short re-checks, small caps) and
    whose limits are ``limits`` if given; its own services, so its own hub."""
    limits = live.pop("limits", None)
    settings = replace(services.settings, live=replace(services.settings.live, **live))
    own = replace(services, settings=settings)
    transport = ASGIWebSocketTransport(api_app.create_app(services=own, limits=limits))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        http.services = own  # type: ignore[attr-defined]
        yield http


@contextlib.asynccontextmanager
async def connect(
    client: httpx.AsyncClient, token: str | None, *, init: bool = True
) -> AsyncIterator[Live]:
    """A socket on /graphql; with ``init``, authenticated with ``token`` and acknowledged."""
    async with aconnect_ws("/graphql", client, subprotocols=[PROTOCOL]) as ws:
        live = Live(ws)
        if init:
            payload = {"Authorization": f"Bearer {token}"} if token else {}
            await live.send({"type": "connection_init", "payload": payload})
            ack = await live.next()
            assert ack["type"] == "connection_ack", ack
        yield live


async def closes(live: Live, code: int, reason: str = "", within: float = 2.0) -> None:
    """The server closes ``live`` within ``within`` seconds with ``code``, its reason
    containing ``reason``."""
    with pytest.raises(WebSocketDisconnect) as closed:
        await live.next(within)
    assert closed.value.code == code
    assert reason in (closed.value.reason or "")
