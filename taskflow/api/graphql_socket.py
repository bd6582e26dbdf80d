"""``/graphql`` speaks HTTP only: a WebSocket upgrade is refused before it is accepted.

strawberry's controller serves ``graphql-transport-ws`` and ``graphql-ws`` on the same
path, and a socket runs queries and mutations outside what guards the HTTP route: the
body guard's size and JSON caps (``api/body_guard.py``), the access log, and the request
id. taskflow has no subscriptions yet, so the door is shut rather than guarded twice:
no subprotocol is offered, and the socket route closes the handshake (HTTP 403 from the
server) without reading a message, building a context or touching the database. The
subscriptions to come get a route with limits of their own.
"""

from __future__ import annotations

from typing import Any

from litestar import WebSocket, websocket
from litestar.status_codes import WS_1008_POLICY_VIOLATION

#: The close reason (seen by ASGI clients; a browser sees the handshake's 403).
REASON = "GraphQL is not served over WebSocket: POST the operation to /graphql over HTTP."


def http_only(controller: type[Any]) -> type[Any]:
    """``controller`` with its socket route refusing every upgrade."""

    class HTTPOnly(controller):  # type: ignore[misc]
        protocols = ()

        @websocket()
        async def websocket_endpoint(self, socket: WebSocket[Any, Any, Any]) -> None:
            # Closing before accepting makes the server refuse the upgrade itself.
            await socket.close(code=WS_1008_POLICY_VIOLATION, reason=REASON)

    HTTPOnly.__name__ = controller.__name__
    HTTPOnly.__qualname__ = controller.__qualname__
    return HTTPOnly
