"""/metrics (and its neighbours) at the edges: an ``Authorization`` header that is not
ASCII, and a scrape that a proxy on this machine forwarded."""

from __future__ import annotations

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow.api import app as api_app
from taskflow.service.common import container
from tests.conftest import with_settings

pytestmark = pytest.mark.anyio

SECRET = "s3cret-metrics-token-0123456789"
#: Raw header values as a client may send them: Latin-1 and UTF-8 bytes after "Bearer ".
NON_ASCII = [
    pytest.param(b"Bearer caf\xe9-token-0123456789", id="latin-1"),
    pytest.param("Bearer café-tøken-0123456789".encode(), id="utf-8"),
    pytest.param(b"Bearer \xff\xfe\x00", id="raw bytes"),
]


async def request(
    services: container.Services,
    method: str,
    path: str,
    *,
    peer: str = "127.0.0.1",
    headers: list[tuple[bytes, bytes]] | None = None,
    json: object = None,
) -> httpx.Response:
    app = api_app.create_app(services=services)
    transport = ASGIWebSocketTransport(app, client=(peer, 4000))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        return await http.request(method, path, headers=headers or [], json=json)


@pytest.mark.parametrize("value", NON_ASCII)
async def test_a_non_ascii_authorization_on_metrics_is_a_401(
    services: container.Services, value: bytes
) -> None:
    guarded = with_settings(services, metrics=f"token:{SECRET}")
    refused = await request(guarded, "GET", "/metrics", headers=[(b"authorization", value)])
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer <token>" in refused.text
    assert "taskflow_" not in refused.text


@pytest.mark.parametrize("value", NON_ASCII)
async def test_a_non_ascii_authorization_elsewhere_is_refused_as_unknown(
    services: container.Services, people: dict[str, str], value: bytes
) -> None:
    header = [(b"authorization", value)]
    answer = await request(
        services, "POST", "/graphql", headers=header, json={"query": "{ me { id } }"}
    )
    assert answer.status_code == 401
    assert answer.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    page = await request(services, "GET", "/reports/sla", headers=header)
    assert page.status_code == 401
    assert 'action="/reports/sign-in"' in page.text
    csv = await request(services, "GET", "/reports/sla.csv", headers=header)
    assert csv.status_code == 401


@pytest.mark.parametrize(
    "forwarded",
    [
        pytest.param((b"x-forwarded-for", b"203.0.113.7"), id="x-forwarded-for"),
        pytest.param((b"forwarded", b"for=203.0.113.7;proto=https"), id="forwarded"),
    ],
)
async def test_a_scrape_forwarded_by_a_proxy_on_this_machine_is_refused(
    services: container.Services, forwarded: tuple[bytes, bytes]
) -> None:
    # No TASKFLOW_TRUSTED_PROXIES, no token: a proxy on this host would open /metrics to
    # anyone who reaches the proxy, since every request it passes on comes from loopback.
    assert services.settings.trusted_proxies == ()
    refused = await request(services, "GET", "/metrics", headers=[forwarded])
    assert refused.status_code == 403
    assert "TASKFLOW_METRICS=token:<bearer>" in refused.text
    assert "TASKFLOW_TRUSTED_PROXIES" in refused.text
    assert "taskflow_" not in refused.text
    # The same scrape sent straight from this machine is served, as before.
    assert (await request(services, "GET", "/metrics")).status_code == 200
    # A proxy on this host that is not the listed one is refused too (uvicorn left its
    # loopback address as the client) ...
    elsewhere = with_settings(services, trusted_proxies=("10.0.0.5",))
    assert (await request(elsewhere, "GET", "/metrics", headers=[forwarded])).status_code == 403
    # ... and with a token, the token decides, whatever the proxy.
    guarded = with_settings(services, metrics=f"token:{SECRET}")
    bearer = (b"authorization", f"Bearer {SECRET}".encode())
    ok = await request(guarded, "GET", "/metrics", peer="203.0.113.9", headers=[forwarded, bearer])
    assert ok.status_code == 200


async def test_a_listed_proxy_on_this_machine_passes_on_its_local_clients(
    services: container.Services,
) -> None:
    # uvicorn resolved X-Forwarded-For from the listed proxy to a client on this machine.
    local = with_settings(services, trusted_proxies=("127.0.0.1",))
    header = [(b"x-forwarded-for", b"127.0.0.1")]
    assert (await request(local, "GET", "/metrics", headers=header)).status_code == 200
    # A client elsewhere, as uvicorn resolves it, stays refused.
    far = await request(local, "GET", "/metrics", peer="203.0.113.7", headers=header)
    assert far.status_code == 403
