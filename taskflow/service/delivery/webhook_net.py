"""Where webhook requests may go, and the HTTP client that goes only there.

The address guard and the connection must see the same DNS answer, or a host
whose DNS answers a public address to the check and ``127.0.0.1`` (or
``169.254.169.254``, or a private address) to the connect gets the worker's POSTs
inside the network (DNS rebinding). So an attempt resolves the endpoint's host
once (:func:`check_destination`), checks every address, and sends with
:func:`pinned` in force: the client's network backend (:class:`PinnedBackend`)
dials only those checked addresses, whatever the host resolves to by then, and
refuses any host the attempt did not check. The URL is left as it is, so the
``Host`` header, the TLS server name (SNI) and the certificate check all use the
endpoint's host name. Redirects are never followed.

The resolver is a seam (``Services.resolver``): tests answer what a rebinding
DNS server would.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from taskflow import errors
from taskflow.config.webhook_settings import WebhookSettings
from taskflow.core.common import parsing, scoped
from taskflow.core.delivery import redact, webhook_events

#: A host name to its addresses now (``system_resolve``, or a test's answers).
Resolver = Callable[[str], Awaitable[list[str]]]
MAX_URL = 2000


async def system_resolve(host: str) -> list[str]:
    """The addresses ``host`` resolves to now, in the system's order of preference."""
    found = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


@dataclass(frozen=True)
class Pin:
    """The addresses one attempt checked for ``host`` (as the HTTP client names it)."""

    host: str
    addresses: tuple[str, ...]


async def check_destination(settings: WebhookSettings, url: str, resolver: Resolver) -> Pin:
    """The checked addresses of ``url``'s host, resolved once; INVALID_INPUT unless ``url``
    is http(s) as allowed and every address may receive deliveries
    (TASKFLOW_WEBHOOK_ALLOW_PRIVATE, _ALLOW_LOOPBACK, _ALLOW_HTTP)."""
    if len(url) > MAX_URL:
        raise errors.ValidationError(f"The URL is longer than {MAX_URL} characters.", field="url")
    webhook_events.check_url(url)
    shown = redact.redacted_url(url.strip())
    try:
        # The host as the client will name it to its network backend (IDNA-encoded).
        host = httpx.URL(url.strip()).raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError):
        raise errors.ValidationError(
            f"The endpoint URL {shown!r} has no valid host name; check the URL.", field="url"
        ) from None
    try:
        addresses = [host] if parsing.parses(ipaddress.ip_address, host) else await resolver(host)
    except (OSError, UnicodeError) as exc:  # UnicodeError: a label too long to look up
        raise errors.ValidationError(
            f"The endpoint host {host!r} does not resolve ({exc}); check the URL.", field="url"
        ) from None
    if not addresses:
        raise errors.ValidationError(
            f"The endpoint host {host!r} resolves to no address; check the URL.", field="url"
        )
    for address in addresses:
        why = webhook_events.refused_address(
            address, allow_private=settings.allow_private, allow_loopback=settings.allow_loopback
        )
        if why is not None:
            raise errors.ValidationError(
                f"The endpoint host {host!r} resolves to {address}, {why}: deliveries go to "
                "public addresses only (an operator may allow private ones with "
                "TASKFLOW_WEBHOOK_ALLOW_PRIVATE=true, loopback ones with "
                "TASKFLOW_WEBHOOK_ALLOW_LOOPBACK=true).",
                field="url",
            )
    if webhook_events.plain_http_refused(url, addresses, allow_http=settings.allow_http):
        raise errors.ValidationError(
            f"The endpoint URL {shown!r} is plain http to a public address: use https (an "
            "operator may allow http with TASKFLOW_WEBHOOK_ALLOW_HTTP=true).",
            field="url",
        )
    return Pin(host, tuple(addresses))


#: The pin of the attempt running in this task (None: no connection may be opened).
_PIN: contextvars.ContextVar[Pin | None] = contextvars.ContextVar("webhook_pin", default=None)


def pinned(pin: Pin) -> contextlib.AbstractContextManager[None]:
    """Within: the client connects to ``pin.host`` at ``pin.addresses`` only."""
    return scoped.scoped(_PIN, pin)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, dialling the current attempt's checked addresses instead
    of resolving the host again (``inner`` does the dialling: anyio's unless a test gives
    one that keeps its connections on this machine)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore calls it so)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pin = _PIN.get()
        if pin is None or pin.host != host:
            raise httpcore.ConnectError(f"{host} was not checked for this attempt: not dialled")
        failed: Exception | None = None
        for address in pin.addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failed = exc
        assert failed is not None  # a pin has at least one address
        raise failed

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore calls it so)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhook deliveries never use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport (its request, response and error mapping) over a connection pool
    whose network backend is a :class:`PinnedBackend`."""

    def __init__(
        self,
        limits: httpx.Limits,
        network: httpcore.AsyncNetworkBackend | None = None,
        ca_file: str | None = None,
    ) -> None:
        super().__init__(limits=limits)
        # httpx offers no way to name the pool's network backend: the same pool as its
        # own (TLS context trusting certifi or SSL_CERT_FILE, or ``ca_file``), built with ours.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl.create_default_context(cafile=ca_file)
            if ca_file
            else httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedBackend(network),
        )


def client(
    settings: WebhookSettings,
    network: httpcore.AsyncNetworkBackend | None = None,
    *,
    ca_file: str | None = None,
    timeout: float | None = None,
) -> httpx.AsyncClient:
    """The worker's HTTP client: pinned connections, no redirects, no proxy from the
    environment (a proxy would resolve the host itself); ``ca_file``: trust that CA
    instead of the system's (a holiday feed served under a private CA)."""
    limits = httpx.Limits(max_connections=settings.concurrency, keepalive_expiry=2.0)
    return httpx.AsyncClient(
        timeout=settings.timeout if timeout is None else timeout,
        follow_redirects=False,
        trust_env=False,
        # At most ``concurrency`` connections: httpcore scans its pool on every request.
        # Idle ones are dropped before common servers' keep-alive (uvicorn: 5 s) ends them.
        transport=PinnedTransport(limits, network, ca_file),
    )
