"""A real webhook receiver for tests: uvicorn on loopback, in a thread, verifying signatures.

Every POST is verified with ``standardwebhooks.Webhook(secret).verify`` (the
receiver's own wall clock checks ``webhook-timestamp``), recorded with its
headers, and answered with the status the test set (``answer``; ``location`` adds a
``Location`` header, a redirect). ``stop()`` and ``start()`` take it down and up again
on the same port (a receiver outage); ``start(tls=(cert, key))`` serves https.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import standardwebhooks
import uvicorn

from taskflow.api import asgi


@dataclass
class Received:
    """One request as the receiver saw it."""

    headers: dict[str, str]
    body: str
    verified: bool
    payload: dict[str, Any] | None


@dataclass
class Receiver:
    """Records deliveries; answers ``status`` (and ``retry_after``) to each."""

    secrets: list[str] = field(default_factory=list)
    status: int = 204
    retry_after: str | None = None
    received: list[Received] = field(default_factory=list)
    port: int = 0
    #: Seconds to wait before answering (a slow receiver).
    delay: float = 0.0
    #: A ``Location`` header on every answer (with a 3xx status: a redirect).
    location: str | None = None
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def answer(self, status: int, retry_after: str | None = None) -> None:
        self.status, self.retry_after = status, retry_after

    def verify(self, body: str, headers: dict[str, str]) -> dict[str, Any] | None:
        for secret in self.secrets:
            try:
                found: dict[str, Any] = standardwebhooks.Webhook(secret).verify(body, headers)
                return found
            except standardwebhooks.WebhookVerificationError:
                continue
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        raw = await asgi.read_body(receive)
        if raw is None:
            return  # the sender died mid-request: nothing was received
        body = raw.decode()
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        payload = self.verify(body, headers)
        self.received.append(Received(headers, body, payload is not None, payload))
        if self.delay:
            import asyncio

            await asyncio.sleep(self.delay)
        extra = [(b"retry-after", self.retry_after.encode())] if self.retry_after else []
        if self.location:
            extra.append((b"location", self.location.encode()))
        await send({"type": "http.response.start", "status": self.status, "headers": extra})
        await send({"type": "http.response.body", "body": b""})

    def start(self, tls: tuple[str, str] | None = None) -> Receiver:
        if not self.port:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
        config = uvicorn.Config(
            self,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            ssl_certfile=tls[0] if tls else None,
            ssl_keyfile=tls[1] if tls else None,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "the receiver did not start"
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._server = self._thread = None

    # -- what a test asserts ---------------------------------------------------------------------

    def ids(self) -> list[str]:
        return [r.headers["webhook-id"] for r in self.received]

    def verified(self) -> list[dict[str, Any]]:
        """The payloads of verified deliveries, first copy of each webhook-id, in order."""
        seen: set[str] = set()
        out = []
        for r in self.received:
            if r.payload is not None and r.headers["webhook-id"] not in seen:
                seen.add(r.headers["webhook-id"])
                out.append(r.payload)
        return out

    def types_of(self, run_id: str) -> list[str]:
        return [p["type"] for p in self.verified() if p["data"]["run"]["id"] == run_id]


def dumps(payload: Any) -> str:
    return json.dumps(payload, indent=2, sort_keys=True)
