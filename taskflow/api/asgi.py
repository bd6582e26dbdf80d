"""Plain ASGI shapes for the API's own middleware (the access log, the body guard), and
reading a request's body for the small ASGI receivers (``taskflow webhooks listen``).

Litestar's TypedDicts cannot express a replayed request message, so the middleware speaks
these plain mappings and callables.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def read_body(receive: Receive) -> bytes | None:
    """A request's whole body, or None when the client went away before sending it all."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)
