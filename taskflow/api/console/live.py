"""The console's live socket ``/console/live`` and its script ``/console/live.js``.

The socket speaks ``graphql-transport-ws`` and runs the same subscriptions as ``/graphql``
(``live_socket.Connection``: the same caps, cost checks, pings, backpressure) for the
principal of the console's session cookie instead of a token in ``connection_init``: the
page's script never sees a token. The process re-checks the session as it re-checks
tokens (``rechecks``): signing out, an expired session or a deactivated principal closes
the socket (4403). A socket opened from another site is refused (4403 before accepting).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import strawberry
from litestar import WebSocket, get, websocket
from litestar.exceptions import WebSocketDisconnect
from litestar.response import Response

from taskflow.api import limits as edge
from taskflow.api import live_socket, report_signin
from taskflow.api.console import pages as console_pages
from taskflow.core.access.principals import Principal
from taskflow.service.access import report_sessions
from taskflow.service.live import rechecks

SCRIPT = (Path(__file__).parent.parent / "static" / "console" / "live.js").read_text()


class SessionConnection(live_socket.Connection):
    """A socket whose principal is the console session's (the cookie sent with the upgrade)."""

    session: str = ""

    async def _authenticate(self, payload: Any) -> tuple[Principal, str]:
        found = await report_sessions.principal_of(self.services, self.session)
        if found is None:
            raise live_socket.Closed(live_socket.UNAUTHORIZED, "Unauthorized: sign in again.")
        # The re-checks key a socket by its "token": this socket's own, never a credential.
        return found, f"console-session:{id(self)}"

    def _watched(self, principal: Principal) -> rechecks.Watched:
        return rechecks.Watched(self.token, self._revoked, principal, session=self.session)


def routes(schema: strawberry.Schema, caps: edge.Limits) -> list[Any]:
    """The socket (bound to the app's schema and caps) and its script."""

    @websocket(f"{console_pages.PATH}/live")
    async def live(socket: WebSocket[Any, Any, Any]) -> None:
        services = socket.app.state.services
        session = socket.cookies.get(console_pages.COOKIE)
        if not report_signin.same_site(services, socket) or not session:
            await socket.close(code=live_socket.FORBIDDEN, reason="Forbidden: not this site.")
            return
        # A page closed while its socket opens (a reload, a link followed) is not an error.
        with contextlib.suppress(WebSocketDisconnect):
            await socket.accept(subprotocols=live_socket.PROTOCOL)
            connection = SessionConnection(socket, schema, caps)
            connection.session = session
            await connection.serve()

    return [live, script]


@get(f"{console_pages.PATH}/live.js", include_in_schema=False)
async def script() -> Response[str]:
    """The console's one script: live inbox rows and the SLA countdown."""
    return Response(
        SCRIPT,
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )
