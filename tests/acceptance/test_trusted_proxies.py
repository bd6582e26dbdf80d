"""The magic-link throttle behind a reverse proxy, against a real ``taskflow serve``.

With ``TASKFLOW_TRUSTED_PROXIES=127.0.0.1``, requests from that address stand for
the client it names in ``X-Forwarded-For``; requests from 127.0.0.2 (another
loopback address, so another peer) are untrusted and their ``X-Forwarded-For``
counts for nothing. Without the setting nobody is believed, 127.0.0.1 included.

Each check is about counts, not timing: a client's first refusals are free and
from its twentieth it is refused outright, so within 21 refused requests one
client always meets 429, and 21 clients with one refusal each never do.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import httpx
import pytest

from taskflow.api.link_pages import UNUSABLE_STATUS
from taskflow.service.links import link_use
from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

BAD_LINK = "/l/not-a-link-at-all"
ENOUGH = link_use.LIMITS.block_after + 1


@pytest.fixture
def behind_a_proxy(deployment: Deployment) -> Iterator[Deployment]:
    deployment.env["TASKFLOW_TRUSTED_PROXIES"] = "127.0.0.1"
    server = deployment.serve()
    yield deployment
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def _client_from(deployment: Deployment, address: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=deployment.base_url, transport=transport, timeout=10)


def _open_bad_link(client: httpx.Client, forwarded_for: str) -> int:
    return client.get(BAD_LINK, headers={"X-Forwarded-For": forwarded_for}).status_code


def test_forwarded_clients_of_a_trusted_proxy_have_their_own_counts(
    behind_a_proxy: Deployment,
) -> None:
    with _client_from(behind_a_proxy, "127.0.0.1") as proxy:
        # Many clients, one mistake each: none of them is slowed for the others.
        statuses = [_open_bad_link(proxy, f"203.0.113.{n}") for n in range(1, ENOUGH + 1)]
        assert statuses == [UNUSABLE_STATUS] * ENOUGH

        # One client keeps trying bad links: it meets 429 ...
        persistent = [_open_bad_link(proxy, "198.51.100.7") for _ in range(ENOUGH)]
        assert 429 in persistent
        assert _open_bad_link(proxy, "198.51.100.7") == 429
        # ... and another client behind the same proxy does not.
        assert _open_bad_link(proxy, "198.51.100.8") == UNUSABLE_STATUS
        # The proxy appends the peer it saw; what the client wrote before it is not believed.
        assert _open_bad_link(proxy, "198.51.100.7, 198.51.100.9") == UNUSABLE_STATUS


@pytest.mark.parametrize(
    ("trusted", "peer"),
    [
        pytest.param("127.0.0.1", "127.0.0.2", id="another peer than the proxy"),
        # uvicorn alone would believe 127.0.0.1; taskflow believes nobody unless told.
        pytest.param(None, "127.0.0.1", id="no proxy configured"),
    ],
)
def test_forwarded_for_from_an_untrusted_peer_is_ignored(
    deployment: Deployment, trusted: str | None, peer: str
) -> None:
    if trusted is not None:
        deployment.env["TASKFLOW_TRUSTED_PROXIES"] = trusted
    server = deployment.serve()
    try:
        with _client_from(deployment, peer) as direct:
            # A new X-Forwarded-For each time does not make a new client: the peer is the client.
            statuses = [_open_bad_link(direct, f"192.0.2.{n}") for n in range(1, ENOUGH + 1)]
            assert 429 in statuses
            assert _open_bad_link(direct, "192.0.2.200") == 429
        if trusted is not None:
            with _client_from(deployment, trusted) as proxy:
                # Nor were its refusals counted against a client it named.
                assert _open_bad_link(proxy, "192.0.2.1") == UNUSABLE_STATUS
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
