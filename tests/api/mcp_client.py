"""The MCP SDK's own client, speaking to the app's ``/mcp`` in process (for the API tests)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from taskflow.api import app as api_app
from taskflow.service.common import container

#: The name the test client gives itself: its writes show ``mcp:test-agent``.
CLIENT = "test-agent"


@contextlib.asynccontextmanager
async def connect(services: container.Services, token: str | None) -> AsyncIterator[Client]:
    """An SDK client on the app built on ``services``, sending ``token`` as its bearer."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx2.ASGITransport(app=api_app.create_app(services=services))
    async with httpx2.AsyncClient(
        transport=transport, base_url="http://taskflow.test", headers=headers
    ) as http:
        client = Client(
            streamable_http_client("http://taskflow.test/mcp", http_client=http),
            client_info=mcp_types.Implementation(name=CLIENT, version="1"),
        )
        async with client:
            yield client


def answer(result: mcp_types.CallToolResult) -> Any:
    """A tool's answer (its JSON text), asserting it is no error."""
    assert not result.is_error, result.content
    return json.loads(_text(result))


def refusal(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """A tool error's refusal: ``{"code", "message", ...}``."""
    assert result.is_error, result.content
    found: dict[str, Any] = json.loads(_text(result))
    return found


def _text(result: mcp_types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, mcp_types.TextContent)
    return block.text
