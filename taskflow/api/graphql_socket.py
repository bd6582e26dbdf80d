"""``/graphql``'s socket route: ``graphql-transport-ws`` for subscriptions, nothing else.

strawberry's controller would serve ``graphql-transport-ws`` and ``graphql-ws`` on the same
path and run queries and mutations outside what guards the HTTP route. Here a socket that
asks for ``graphql-transport-ws`` is served by ``api/live_socket.py`` (subscriptions only,
with its own guards); any other upgrade (``graphql-ws``, no subprotocol) is refused before
it is accepted (HTTP 403 from the server) without reading a message or touching the
database.
"""

from __future__ import annotations

from typing import Any

from litestar import WebSocket, websocket
from litestar.status_codes import WS_1008_POLICY_VIOLATION

from taskflow.api import limits as edge
from taskflow.api import live_socket

#: The close reason (seen by ASGI clients; a browser sees the handshake's 403).
REASON = (
    "GraphQL over WebSocket speaks graphql-transport-ws only, for subscriptions: "
    "POST queries and mutations to /graphql over HTTP."
)


def subscriptions_only(controller: type[Any], caps: edge.Limits) -> type[Any]:
    """``controller`` with its socket route serving subscriptions on graphql-transport-ws
    and refusing every other upgrade."""

    class Guarded(controller):  # type: ignore[misc]
        protocols = ()

        @websocket()
        async def websocket_endpoint(self, socket: WebSocket[Any, Any, Any]) -> None:
            if live_socket.PROTOCOL not in socket.scope.get("subprotocols", ()):
                # Closing before accepting makes the server refuse the upgrade itself.
                await socket.close(code=WS_1008_POLICY_VIOLATION, reason=REASON)
                return
            await live_socket.serve(socket, self.schema, caps)

    Guarded.__name__ = controller.__name__
    Guarded.__qualname__ = controller.__qualname__
    return Guarded
