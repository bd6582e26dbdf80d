"""The body guard stops reading an oversized body at the cap: the rest is never read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskflow.api import app as api_app
from taskflow.api import limits
from taskflow.service.common import container
from tests.api import raw_asgi

pytestmark = pytest.mark.anyio

CAP = 2000
CHUNK = 500
CHUNKS = 1000  # 500 kB offered, 250 times the cap


async def _post_chunks(
    services: container.Services, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[str, str], dict[str, Any], int]:
    """POST /graphql with a raw ASGI scope whose body arrives in chunks: (status, headers,
    body, bytes the app pulled)."""
    application = api_app.create_app(services=services, limits=limits.Limits(max_body_bytes=CAP))
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled >= CHUNK * CHUNKS:
            return {"type": "http.disconnect"}
        pulled += CHUNK
        return {"type": "http.request", "body": b" " * CHUNK, "more_body": pulled < CHUNK * CHUNKS}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = raw_asgi.post_scope("/graphql", [(b"content-type", b"application/json"), *headers])
    await application(scope, receive, send)  # type: ignore[arg-type]
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    answered = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], answered, json.loads(body), pulled


async def test_a_streamed_body_over_the_cap_is_read_no_further_than_the_cap(
    services: container.Services,
) -> None:
    status, headers, body, pulled = await _post_chunks(services, [])
    assert status == 400
    assert body["errors"][0]["message"].startswith(f"The request body is over {CAP} bytes")
    assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    # The cap and the chunk that passed it, not the 500 kB offered.
    assert pulled <= CAP + CHUNK
    # What is left unread cannot be told from a next request: the connection ends here.
    assert headers["connection"] == "close"


async def test_a_declared_length_over_the_cap_is_refused_before_any_of_it_is_read(
    services: container.Services,
) -> None:
    declared = [(b"content-length", str(CHUNK * CHUNKS).encode())]
    status, headers, body, pulled = await _post_chunks(services, declared)
    assert status == 400
    assert body["errors"][0]["message"].startswith(f"The request body is over {CAP} bytes")
    assert pulled == 0
    assert headers["connection"] == "close"
