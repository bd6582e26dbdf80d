"""``/graphql`` over WebSocket: subscriptions only, on ``graphql-transport-ws``, guarded.

The protocol is spoken here rather than by strawberry's handler so that every guard of
the HTTP route has its socket twin (docs/live.md, docs/security.md):

- authentication on ``connection_init`` (a staff bearer token in the payload), re-checked
  every ``recheck_interval``: a revoked token or a deactivated principal closes the socket
  (4403); the principal as re-read is what later changes are filtered for;
- a message is capped at ``max_body_bytes``; an operation passes the HTTP route's token,
  depth, alias and cost checks (the schema's own); only subscriptions run (a query or
  mutation is answered with an error: they go over HTTP);
- caps: subscriptions per connection (an ``error`` naming the cap), connections per
  principal (4429 at ``connection_init``);
- ``connection_init`` within ``init_timeout`` (4408), a connection silent for
  ``idle_timeout`` is closed (4408), the server pings every ``ping_interval``;
- backpressure: a subscriber whose queue fills (a client that does not read) is dropped
  with close code 1008, never buffered without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import strawberry
from litestar import WebSocket
from litestar.exceptions import WebSocketDisconnect
from strawberry.types import ExecutionResult

from taskflow import errors
from taskflow.api import access_log
from taskflow.api import limits as edge
from taskflow.api.graphql.common import guards
from taskflow.api.graphql.common.context import Context
from taskflow.api.graphql.runs import types as run_types
from taskflow.config.live_settings import LiveSettings
from taskflow.core.access.principals import Principal
from taskflow.service.access import principals as principal_service
from taskflow.service.common.container import Services
from taskflow.service.live import hub as live_hub
from taskflow.service.live import live_metrics, rechecks

log = logging.getLogger("taskflow.api")

PROTOCOL = "graphql-transport-ws"
#: Close codes (graphql-transport-ws's where it names one).
BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, TIMEOUT, DUPLICATE, TOO_MANY = (
    4400,
    4401,
    4403,
    4408,
    4409,
    4429,
)
POLICY, TOO_BIG = 1008, 1009


class Closed(Exception):
    """The connection must close with ``code`` and ``reason``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


def _token(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return None
    for name in ("Authorization", "authorization"):
        value = payload.get(name)
        if isinstance(value, str) and value.lower().startswith("bearer "):
            return value[7:].strip() or None
    value = payload.get("token")
    return value if isinstance(value, str) and value else None


class Connection:
    """One socket: its principal, its operations, its timers."""

    def __init__(
        self, socket: WebSocket[Any, Any, Any], schema: strawberry.Schema, caps: edge.Limits
    ) -> None:
        self.socket = socket
        self.schema = schema
        self.caps = caps
        self.services: Services = socket.app.state.services
        self.settings: LiveSettings = self.services.settings.live
        self.principal: Principal | None = None
        self.token = ""
        self.operations: dict[str, asyncio.Task[None]] = {}
        #: The socket's entry in the process's re-checks (its principal as last read).
        self.watched: rechecks.Watched | None = None
        self.closing: asyncio.Future[Closed] = asyncio.get_running_loop().create_future()
        self._sending = asyncio.Lock()

    def close(self, code: int, reason: str) -> None:
        """Ask the connection to close (the first reason wins)."""
        if not self.closing.done():
            self.closing.set_result(Closed(code, reason))

    async def serve(self) -> None:
        """Run the connection until it closes; then close the socket and leave the hub."""
        hub = live_hub.hub_for(self.services)
        tasks: list[asyncio.Task[Any]] = []
        watched: rechecks.Watched | None = None
        try:
            await self._init(hub)
            assert self.principal is not None
            watched = self.watched = self._watched(self.principal)
            hub.rechecks.watch(watched)
            tasks = [asyncio.create_task(self._receive()), asyncio.create_task(self._ping())]
            done = await self.closing
        except Closed as closed:
            done = closed
        finally:
            for task in [*tasks, *self.operations.values()]:
                task.cancel()
            for task in [*tasks, *self.operations.values()]:
                with contextlib.suppress(BaseException):
                    await task
            if watched is not None:
                hub.rechecks.unwatch(watched)
            if self.principal is not None:
                hub.disconnect(self.principal.id)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.socket.close(code=done.code, reason=done.reason), 1)

    def _watched(self, principal: Principal) -> rechecks.Watched:
        """What the process re-checks for this socket: its token."""
        return rechecks.Watched(self.token, self._revoked, principal)

    async def _message(self, wait: float) -> dict[str, Any]:
        try:
            async with asyncio.timeout(wait):
                text = await self.socket.receive_data(mode="text")
        except TimeoutError:
            raise Closed(TIMEOUT, "Connection idle too long: closed.") from None
        except WebSocketDisconnect:
            raise Closed(1000, "") from None
        if len(text.encode()) > self.caps.max_body_bytes:
            raise Closed(TOO_BIG, f"A message may hold at most {self.caps.max_body_bytes} bytes.")
        try:
            message = json.loads(text)
        except ValueError:
            raise Closed(BAD_REQUEST, "Invalid message: not JSON.") from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise Closed(BAD_REQUEST, "Invalid message: an object with a type is expected.")
        return message

    async def _send(self, message: dict[str, Any]) -> None:
        async with self._sending:
            await self.socket.send_text(json.dumps(message, separators=(",", ":")))

    async def _authenticate(self, payload: Any) -> tuple[Principal, str]:
        """The principal ``connection_init``'s payload names by its bearer token, and the
        token (Closed 4401 when it names none)."""
        token = _token(payload)
        if token is None:
            raise Closed(
                UNAUTHORIZED,
                "Unauthorized: connection_init's payload needs "
                '{"Authorization": "Bearer <staff token>"}.',
            )
        try:
            return await principal_service.authenticate(self.services, token), token
        except errors.AuthenticationError as refused:
            raise Closed(UNAUTHORIZED, f"Unauthorized: {refused.message}"[:120]) from None

    async def _init(self, hub: live_hub.Hub) -> None:
        message = await self._message(self.settings.init_timeout)
        if message["type"] != "connection_init":
            raise Closed(UNAUTHORIZED, "Unauthorized: send connection_init first.")
        principal, token = await self._authenticate(message.get("payload"))
        if not hub.connect(principal.id, self.settings.max_connections):
            raise Closed(
                TOO_MANY,
                f"Too many connections: at most {self.settings.max_connections} per principal.",
            )
        self.principal, self.token = principal, token
        access_log.note_principal(principal.id)
        await self._send({"type": "connection_ack"})

    async def _receive(self) -> None:
        try:
            while True:
                message = await self._message(self.settings.idle_timeout)
                kind = message["type"]
                if kind == "ping":
                    await self._send({"type": "pong"})
                elif kind == "subscribe":
                    await self._subscribe(message)
                elif kind == "complete":
                    task = self.operations.pop(str(message.get("id")), None)
                    if task is not None:
                        task.cancel()
                elif kind == "connection_init":
                    raise Closed(TOO_MANY, "Too many initialisation requests.")
                elif kind != "pong":
                    raise Closed(BAD_REQUEST, f"Invalid message type {kind[:40]!r}.")
        except Closed as closed:
            self.close(closed.code, closed.reason)

    async def _subscribe(self, message: dict[str, Any]) -> None:
        op_id, payload = message.get("id"), message.get("payload")
        if not isinstance(op_id, str) or not op_id or not isinstance(payload, dict):
            raise Closed(BAD_REQUEST, "Invalid subscribe message: an id and a payload needed.")
        if op_id in self.operations:
            raise Closed(DUPLICATE, f"Subscriber for {op_id[:40]} already exists.")
        if len(self.operations) >= self.settings.max_subscriptions:
            await self._error(
                op_id,
                f"Too many subscriptions on this connection: at most "
                f"{self.settings.max_subscriptions}. Complete one first, or open another "
                "connection.",
                "LIMIT_EXCEEDED",
            )
            return
        self.operations[op_id] = asyncio.create_task(self._operate(op_id, payload))

    async def _error(self, op_id: str, message: str, code: str) -> None:
        error = {"message": message, "extensions": {"code": code}}
        await self._send({"id": op_id, "type": "error", "payload": [error]})

    async def _operate(self, op_id: str, payload: dict[str, Any]) -> None:
        assert self.watched is not None
        context = Context(
            services=self.services,
            request_id=access_log.request_id(None),
            authorization=f"Bearer {self.token}",
            principal=self.watched.principal,
            run_loader=run_types.run_loader,
            live_dropped=lambda: self.close(
                POLICY, "Too slow: the client did not read its messages; dropped."
            ),
        )
        query, variables = payload.get("query"), payload.get("variables")
        if not isinstance(query, str) or not isinstance(variables, dict | None):
            await self._error(op_id, "A subscribe payload needs a query (text).", "INVALID_INPUT")
            return
        found = guards.operation_cost(
            self.schema._schema, query, payload.get("operationName"), variables or {}
        )
        if found is not None and found > self.caps.max_query_cost:
            refused = guards.too_costly(found, self.caps.max_query_cost)
            await self._send({"id": op_id, "type": "error", "payload": [refused.formatted]})
            self.operations.pop(op_id, None)
            return
        try:
            result = await self.schema.subscribe(
                query,
                variable_values=variables,
                context_value=context,
                operation_name=payload.get("operationName"),
            )
            if isinstance(result, ExecutionResult):
                await self._send({"id": op_id, "type": "error", "payload": _errors(result)})
                return
            async for one in result:
                if one.errors and one.data is None:
                    await self._send({"id": op_id, "type": "error", "payload": _errors(one)})
                    return
                body: dict[str, Any] = {"data": one.data}
                if one.errors:
                    body["errors"] = _errors(one)
                await self._send({"id": op_id, "type": "next", "payload": body})
            await self._send({"id": op_id, "type": "complete"})
        finally:
            self.operations.pop(op_id, None)

    async def _ping(self) -> None:
        while True:
            await asyncio.sleep(self.settings.ping_interval)
            await self._send({"type": "ping"})

    def _revoked(self, _refused: errors.AuthenticationError) -> None:
        live_metrics.DROPPED.labels("revoked").inc()
        self.close(FORBIDDEN, "Forbidden: the token was revoked or its principal deactivated.")


def _errors(result: ExecutionResult) -> list[dict[str, Any]]:
    return [dict(e.formatted) for e in result.errors or ()]


async def serve(
    socket: WebSocket[Any, Any, Any], schema: strawberry.Schema, caps: edge.Limits
) -> None:
    """Accept a ``graphql-transport-ws`` socket and serve it until it closes."""
    await socket.accept(subprotocols=PROTOCOL)
    await Connection(socket, schema, caps).serve()
