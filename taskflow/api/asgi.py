"""Plain ASGI shapes for the API's own middleware (the access log, the body guard).

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
