"""Webhook SSRF by DNS rebinding: an attempt connects to exactly the address it checked.

The resolver is the service's seam (``Services.resolver``): here it answers what a
rebinding DNS server would. The receiver is real (uvicorn on 127.0.0.1); connections
that would leave this machine are refused by ``LocalOnly`` (a network that records
every dial and only dials loopback), so a test never sends a packet elsewhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpcore
import pytest

from taskflow import clock
from taskflow.config.webhook_settings import WebhookSettings
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests import tls
from tests.api import test_webhooks_api as hooks
from tests.api import workflows as w
from tests.conftest import asgi_client
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.215.14"
#: Production: loopback and private refused; plain http allowed (the receiver speaks http).
PROD = WebhookSettings(allow_http=True, concurrency=4)
#: Development's default: loopback allowed.
DEV = WebhookSettings(allow_loopback=True, concurrency=4)


class Rebinding:
    """A resolver answering ``answers`` in turn (the last one from then on)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


class LocalOnly(httpcore.AsyncNetworkBackend):
    """anyio's sockets for loopback addresses; any other dial is recorded and refused."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.dialled: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append((host, port))
        if not host.startswith("127."):
            raise httpcore.ConnectError(f"the test network does not leave this machine ({host})")
        return await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def _with(
    services: container.Services, webhooks: WebhookSettings, resolver: Rebinding
) -> container.Services:
    settings = dataclasses.replace(services.settings, webhooks=webhooks)
    return dataclasses.replace(services, settings=settings, resolver=resolver)


async def _deliver(
    services: container.Services,
    people: dict[str, str],
    url: str,
    frozen_clock: clock.FrozenClock,
    network: httpcore.AsyncNetworkBackend | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Create an endpoint at ``url``, start a run, send what is due; the endpoint and its
    delivery log."""
    async with asgi_client(services) as client:
        made = await hooks.create(client, people["ada"], url, workflows=["expense-approval"])
        assert made["__typename"] == "WebhookEndpointSuccess", made
        await w.start(client, people["app"], "expense-approval", "expense", f"EXP-{url}", w.EXPENSE)
        sender = webhook_delivery.Sender(services, jitter=lambda: 0.0, network=network)
        try:
            assert await hooks.drain(sender, frozen_clock) > 0
        finally:
            await sender.close()
        endpoint: dict[str, Any] = made["endpoint"]
        return endpoint, await hooks.deliveries(client, people["ada"], endpoint["id"])


async def test_a_host_rebinding_to_loopback_after_the_check_gets_nothing_in_production(
    services: container.Services,
    people: dict[str, str],
    receiver: Receiver,
    frozen_clock: clock.FrozenClock,
) -> None:
    # Public when the endpoint is created, 127.0.0.1 from then on.
    dns = Rebinding([PUBLIC], ["127.0.0.1"])
    network = LocalOnly()
    url = f"http://rebind.test:{receiver.port}/hooks"
    _, log = await _deliver(_with(services, PROD, dns), people, url, frozen_clock, network)

    assert receiver.received == []
    assert network.dialled == []  # refused before any connection
    assert len(dns.asked) >= 2
    assert set(dns.asked) == {"rebind.test"}
    tried = [d for d in log if d["attempts"]]
    assert tried
    assert all(d["state"] == "PENDING" for d in log)
    assert all("resolves to 127.0.0.1, a loopback address" in d["lastError"] for d in tried)


async def test_the_connection_goes_to_the_address_checked_not_to_a_second_lookup(
    services: container.Services,
    people: dict[str, str],
    receiver: Receiver,
    frozen_clock: clock.FrozenClock,
) -> None:
    """The resolver answers a public address; the system's DNS answers 127.0.0.1 for
    ``localhost``. A client that looked the host up again (main before the fix) would
    deliver to the loopback receiver; the pinned one dials the checked address only."""
    dns = Rebinding([PUBLIC])
    network = LocalOnly()
    url = f"http://localhost:{receiver.port}/hooks"
    _, log = await _deliver(_with(services, PROD, dns), people, url, frozen_clock, network)

    assert receiver.received == []
    assert set(network.dialled) == {(PUBLIC, receiver.port)}
    tried = [d for d in log if d["attempts"]]
    assert tried
    assert all(d["lastError"].startswith("ConnectError") for d in tried)


async def test_a_pinned_connection_delivers_with_the_endpoint_host_name(
    services: container.Services,
    people: dict[str, str],
    receiver: Receiver,
    frozen_clock: clock.FrozenClock,
) -> None:
    dns = Rebinding(["127.0.0.1"])  # loopback is allowed in development
    url = f"http://hooks.test:{receiver.port}/hooks"
    made, log = await _deliver(_with(services, DEV, dns), people, url, frozen_clock)

    assert log
    assert all(d["state"] == "DELIVERED" for d in log)
    receiver.secrets.append(made["secret"])
    assert len(receiver.received) == len(log)
    for got in receiver.received:
        assert got.headers["host"] == f"hooks.test:{receiver.port}"
        assert receiver.verify(got.body, got.headers) is not None


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A self-signed certificate for hooks.test only, trusted through SSL_CERT_FILE."""
    cert, key = tls.trusted_certificate(tmp_path, monkeypatch, "hooks.test", "DNS:hooks.test")
    return str(cert), str(key)


async def test_tls_names_and_verifies_the_endpoint_host_not_the_pinned_address(
    services: container.Services,
    people: dict[str, str],
    certificate: tuple[str, str],
    frozen_clock: clock.FrozenClock,
) -> None:
    receiver = Receiver().start(tls=certificate)
    try:
        dns = Rebinding(["127.0.0.1"])
        hooked = _with(services, DEV, dns)
        url = f"https://hooks.test:{receiver.port}/hooks"
        _, log = await _deliver(hooked, people, url, frozen_clock)
        # The certificate names hooks.test, not 127.0.0.1: the handshake verified the name.
        assert log
        assert all(d["state"] == "DELIVERED" for d in log), log
        assert {r.headers["host"] for r in receiver.received} == {f"hooks.test:{receiver.port}"}

        # The same address under another name: the certificate does not match, nothing sent.
        other = f"https://other.test:{receiver.port}/hooks"
        _, log = await _deliver(hooked, people, other, frozen_clock)
        assert all(r.headers["host"].startswith("hooks.test:") for r in receiver.received)
        tried = [d for d in log if d["attempts"]]
        assert tried
        assert all("CERTIFICATE_VERIFY_FAILED" in d["lastError"] for d in tried), tried
    finally:
        receiver.stop()


async def test_a_redirect_is_refused_and_its_target_gets_nothing(
    services: container.Services,
    people: dict[str, str],
    receiver: Receiver,
    frozen_clock: clock.FrozenClock,
) -> None:
    inside = Receiver().start()
    try:
        receiver.answer(302)
        receiver.location = f"http://127.0.0.1:{inside.port}/admin?token=inner-secret"
        dns = Rebinding(["127.0.0.1"])
        url = f"http://hooks.test:{receiver.port}/hooks"
        _, log = await _deliver(_with(services, DEV, dns), people, url, frozen_clock)
        assert inside.received == []
        tried = [d for d in log if d["attempts"]]
        assert tried
        assert all(d["state"] == "DEAD" for d in tried)
        assert all(d["lastError"] == "HTTP 302: redirects are not followed" for d in tried)
    finally:
        inside.stop()
