"""One access line per HTTP request (logger ``taskflow.access``).

An ASGI wrapper, outermost, so even a request the body guard refuses is logged.
Its fields: ``request_id`` (the ``X-Request-Id`` header, else made up here; the same
id GraphQL's masked errors report), ``method``, ``path`` (never the query string; a
magic link's token replaced by its placeholder),
``status``, ``duration_ms``, ``principal`` (the authenticated principal's id, when
there is one) and, for GraphQL, ``operation`` (the operation name) and ``outcome``
(``ok``, ``refused:CODE`` or ``error:CODE``). Never a token, a query text or variables.
"""

from __future__ import annotations

import contextvars
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from taskflow.api.asgi import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("taskflow.access")


#: Longest request id taken from a client's header (longer ones are replaced).
MAX_REQUEST_ID = 64


@dataclass
class Access:
    """What the request's handlers learn about it, for its access line."""

    request_id: str
    principal: str | None = None
    operation: str | None = None
    outcome: str | None = None


CURRENT: contextvars.ContextVar[Access | None] = contextvars.ContextVar(
    "taskflow_access", default=None
)


def new_request_id(header: str | None) -> str:
    """The client's ``X-Request-Id`` when it is short and printable, else a fresh one."""
    if header and len(header) <= MAX_REQUEST_ID and header.isprintable() and " " not in header:
        return header
    return os.urandom(8).hex()


def request_id(header: str | None) -> str:
    """This request's id (the access line's), or a fresh one outside a logged request."""
    current = CURRENT.get()
    return current.request_id if current is not None else new_request_id(header)


def note_principal(principal_id: str) -> None:
    """Record the authenticated caller (its id only) on this request's access line."""
    current = CURRENT.get()
    if current is not None:
        current.principal = principal_id


def note_graphql(operation: str | None, outcome: str) -> None:
    """Record the GraphQL operation name and outcome on this request's access line."""
    current = CURRENT.get()
    if current is not None:
        current.operation = operation
        current.outcome = outcome


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def logged_path(scope: Scope) -> str:
    """The request's path, with a secret path parameter (a magic link's token) as its
    route's placeholder: ``/l/{token}``."""
    params = scope.get("path_params") or {}
    if any("token" in str(name).lower() for name in params):
        return str(scope.get("path_template") or "(a path holding a token)")
    return str(scope.get("path"))


def wrap(app: ASGIApp) -> ASGIApp:
    """``app`` with an access line logged when each HTTP request is answered."""

    async def logged(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        access = Access(new_request_id(_header(scope, b"x-request-id")))
        token = CURRENT.set(access)
        started = time.perf_counter()
        status = 500  # an app that raises before answering is answered 500 by the server

        async def sending(message: Message) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 500))
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            CURRENT.reset(token)
            fields: dict[str, Any] = {
                "request_id": access.request_id,
                "method": scope.get("method"),
                "path": logged_path(scope),
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                "principal": access.principal,
            }
            if access.operation is not None or access.outcome is not None:
                fields["operation"] = access.operation
                fields["outcome"] = access.outcome
            log.info("%s %s %d", fields["method"], fields["path"], status, extra=fields)

    return logged
