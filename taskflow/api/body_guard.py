"""The first gate of ``POST /graphql``: a body that is no GraphQL request is a 400.

Runs as ASGI middleware before strawberry sees the request: a body over the size
cap, not UTF-8, not JSON, nested deeper than the cap, or not a JSON object with a
string ``query`` answers HTTP 400 with a GraphQL-shaped error whose
``extensions.code`` is ``BAD_REQUEST`` (strawberry would answer some of these with
a 500 or a plain-text body). A good body is handed on unchanged, and the request it
parsed to rides in the ASGI scope (:data:`PARSED`), so the GraphQL view does not parse
it again (``api/graphql_post.py``). An oversized body is read no further than the cap
(not at all when its declared length is over it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

from taskflow.api import limits as edge
from taskflow.api.asgi import ASGIApp, Message, Receive, Scope, Send

BAD_REQUEST = 400
PATH = "/graphql"
#: The scope key of a good body's JSON object (the GraphQL request, checked).
PARSED = "taskflow.graphql_request"


class BadBody(Exception):
    """Why a body is refused (the message is the client's)."""


def error_body(message: str, code: str = "BAD_REQUEST", **extensions: Any) -> bytes:
    """A GraphQL-shaped error document."""
    return json.dumps(
        {"data": None, "errors": [{"message": message, "extensions": {"code": code, **extensions}}]}
    ).encode()


async def send_error(send: Send, status: int, body: bytes, **headers: str) -> None:
    """Answer with a JSON ``body`` (used for 400s here and 503s by the outage handler)."""
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _depth(value: Any, cap: int) -> None:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > cap:
                raise BadBody(
                    f"The request body nests JSON deeper than {cap} levels: flatten the "
                    "variables (a payload or subject is a shallow document)."
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    # PostgreSQL's jsonb has no Infinity: 1e400 would pass here and fail in SQL.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def _over(limits: edge.Limits) -> str:
    return (
        f"The request body is over {limits.max_body_bytes} bytes: send less data "
        "(large documents belong elsewhere, referenced from the subject)."
    )


def check_body(body: bytes, limits: edge.Limits) -> dict[str, Any]:
    """``body``'s JSON object; :class:`BadBody` unless it is a GraphQL request within the
    caps."""
    if len(body) > limits.max_body_bytes:
        raise BadBody(_over(limits))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadBody("The request body is not UTF-8 text: encode the JSON as UTF-8.") from None
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise BadBody(
            f"The request body nests JSON deeper than {limits.max_json_depth} levels."
        ) from None
    except ValueError:
        raise BadBody(
            "The request body is not JSON (NaN and Infinity are not JSON either, nor numbers "
            'beyond 1e308): send {"query": "...", "variables": {...}}.'
        ) from None
    if not isinstance(data, dict):
        raise BadBody(
            'The request body is JSON but not an object: send {"query": "...", '
            '"variables": {...}} (batched requests are not accepted).'
        )
    _depth(data, limits.max_json_depth)
    if not isinstance(data.get("query"), str):
        raise BadBody('The request has no "query" string: put the GraphQL operation there.')
    if not isinstance(data.get("variables"), dict | None):
        raise BadBody('"variables" must be a JSON object (or left out).')
    if not isinstance(data.get("operationName"), str | None):
        raise BadBody('"operationName" must be a string (or left out).')
    if not isinstance(data.get("extensions"), dict | None):
        raise BadBody('"extensions" must be a JSON object (or left out).')
    return data


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            # What strawberry parses as JSON; anything else it would answer in plain text.
            return b"application/json" in value.lower()
    return False


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse_oversized(send: Send, limits: edge.Limits, finished: bool) -> None:
    """Refuse a body over the cap, having read at most the cap and one chunk of it.

    The rest is never read: a client could otherwise make the server take in a body of
    any size before the refusal. Unless the body ended, the connection closes after the
    answer (``Connection: close``), since what is left of it cannot be told from a next
    request. A client that sent ``Expect: 100-continue`` with a declared length over the
    cap is answered before it sends anything (the server asks for the body only when it
    is first read).
    """
    close = {} if finished else {"connection": "close"}
    await send_error(send, BAD_REQUEST, error_body(_over(limits)), **close)


#: What the guard does with a good body: ``then(app, scope, receive, send)``.
Then = Callable[[ASGIApp, Scope, Receive, Send], Awaitable[None]]


def guard(limits: edge.Limits, then: Then | None = None) -> Callable[[ASGIApp], ASGIApp]:
    """Middleware factory: refuse bad GraphQL bodies before strawberry parses them; a good
    one goes on to ``then`` (given the route's app), else to the route's app."""

    def middleware(app: ASGIApp) -> ASGIApp:
        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if (
                scope["type"] != "http"
                or scope.get("method") != "POST"
                or scope.get("path", "").rstrip("/") != PATH
            ):
                await app(scope, receive, send)
                return
            if not _is_json(scope):
                wanted = "Send the request as JSON (header Content-Type: application/json)."
                await send_error(send, BAD_REQUEST, error_body(wanted))
                return
            declared = _declared_length(scope)
            chunks: list[bytes] = []
            size = 0
            too_big = declared is not None and declared > limits.max_body_bytes
            finished = False
            while not too_big:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                finished = not message.get("more_body", False)
                if size > limits.max_body_bytes:
                    too_big = True
                    break
                chunks.append(chunk)
                if finished:
                    break
            if too_big:
                await _refuse_oversized(send, limits, finished)
                return
            body = b"".join(chunks)
            try:
                scope[PARSED] = check_body(body, limits)
            except BadBody as refused:
                await send_error(send, BAD_REQUEST, error_body(str(refused)))
                return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            if then is None:
                await app(scope, replay, send)
            else:
                await then(app, scope, replay, send)

        return guarded

    return middleware
