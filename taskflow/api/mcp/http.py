"""``/mcp``: the agent tools over the SDK's streamable HTTP transport, in the app.

Every request needs a staff bearer token, checked here before the SDK reads the body (a
request without one, or with one that fails, is a 401 and reaches no tool), and again by
each tool call as a GraphQL request checks it. The transport is stateless with JSON answers:
any server process answers any request (``taskflow serve --workers N`` keeps no session),
and a fresh session manager serves each request, so no task outlives it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from litestar.handlers import asgi
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from strawberry import Schema

from taskflow import errors
from taskflow.api.mcp import server as mcp_server
from taskflow.service.access import principals
from taskflow.service.common.container import Services

PATH = "/mcp"
UNAUTHORIZED = 401


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (None otherwise)."""
    scheme, _, token = (header or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _token_of(ctx: ToolContext[Any, Any]) -> str | None:
    headers = ctx.headers or {}
    return bearer(headers.get("authorization"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, message: str) -> None:
    body = json.dumps({"error": "UNAUTHENTICATED", "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": UNAUTHORIZED,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="taskflow"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def route(schema: Schema, services_of: Callable[[], Services]) -> Any:
    """The Litestar mount answering ``/mcp`` from ``schema`` for each request's caller."""
    server = mcp_server.build(schema, services_of, _token_of)
    return mount(server, services_of)


def mount(server: MCPServer[Any], services_of: Callable[[], Services]) -> Any:
    """``server`` mounted at :data:`PATH`, behind the staff bearer tokens."""
    # The SDK's session manager takes the low-level server MCPServer wraps.
    lowlevel = server._lowlevel_server

    @asgi(PATH, is_mount=True, copy_scope=True)
    async def agent_tools(scope: Scope, receive: Receive, send: Send) -> None:
        token = bearer(_header(scope, b"authorization"))
        if token is None:
            await _refuse(
                send,
                "The agent tools need a staff token: send 'Authorization: Bearer <token>' "
                "(mint one with taskflow token <principal-id>).",
            )
            return
        try:
            await principals.authenticate(services_of(), token)
        except errors.AuthenticationError as exc:
            await _refuse(send, exc.message)
            return
        manager = StreamableHTTPSessionManager(app=lowlevel, stateless=True, json_response=True)
        async with manager.run():
            await manager.handle_request(dict(scope), receive, send)  # type: ignore[arg-type]

    return agent_tools
