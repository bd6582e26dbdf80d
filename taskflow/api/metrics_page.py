"""``GET /metrics``: Prometheus metrics, behind ``TASKFLOW_METRICS`` (docs/operations.md).

``loopback`` serves clients on this machine only (a request forwarded by a
trusted proxy counts as coming from its client, and one forwarded by a proxy on this
machine that is not listed in ``TASKFLOW_TRUSTED_PROXIES`` is refused, so a proxy does
not open it to the world); ``token:<bearer>`` wants that bearer token; ``off`` answers
404.
"""

from __future__ import annotations

import hmac
import ipaddress

from litestar import Request, get
from litestar.datastructures import State
from litestar.response import Response

from taskflow.config import config
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics


def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _within(host: str, networks: tuple[str, ...]) -> bool:
    address = ipaddress.ip_address(host)
    return any(address in ipaddress.ip_network(network) for network in networks)


def _proxied_unknown(request: Request[object, object, State], trusted: tuple[str, ...]) -> bool:
    """Whether a loopback caller is a proxy on this machine whose client is not known.

    A proxy on this host (nginx, a sidecar, an SSH tunnel) connects from loopback on
    behalf of anyone. Only ``X-Forwarded-For`` from a listed proxy is resolved (by uvicorn,
    ``TASKFLOW_TRUSTED_PROXIES``), so a forwarded request is refused when no proxy is
    listed, when it names its client in ``Forwarded`` alone, or when the loopback address
    it comes from is no listed proxy (uvicorn left the peer in place).
    """
    headers = request.headers
    if "x-forwarded-for" not in headers:
        return "forwarded" in headers
    if not trusted:
        return True
    host = request.client.host if request.client else None
    return host is None or not _within(host, trusted)


def _refusal(
    setting: str, trusted: tuple[str, ...], request: Request[object, object, State]
) -> Response[str] | None:
    """The answer for a caller the setting does not let in (None: let in)."""
    mode, token = config.metrics_access(setting)
    if mode == "off":
        return Response("Not found.\n", status_code=404, media_type="text/plain")
    if token is None:
        if _loopback(request.client.host if request.client else None):
            if not _proxied_unknown(request, trusted):
                return None
            return Response(
                "This scrape came through a proxy on this machine (X-Forwarded-For or "
                "Forwarded) whose client taskflow cannot tell, so loopback does not let it "
                "in: set TASKFLOW_METRICS=token:<bearer> and send 'Authorization: Bearer "
                "<bearer>', or list the proxy in TASKFLOW_TRUSTED_PROXIES.\n",
                status_code=403,
                media_type="text/plain",
            )
        return Response(
            "Metrics are served to clients on this machine only (TASKFLOW_METRICS=loopback); "
            "scrape from localhost, or set TASKFLOW_METRICS=token:<bearer> and send "
            "'Authorization: Bearer <bearer>'.\n",
            status_code=403,
            media_type="text/plain",
        )
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    # Compared as bytes: compare_digest refuses a str with non-ASCII characters (a header
    # is read as Latin-1, so any byte may arrive), and that would be a 500, not a 401.
    if scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode("utf-8", "surrogateescape"),
        token.encode("utf-8", "surrogateescape"),
    ):
        return None
    return Response(
        "Send the metrics token configured in TASKFLOW_METRICS as "
        "'Authorization: Bearer <token>'.\n",
        status_code=401,
        media_type="text/plain",
        headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
    )


@get("/metrics", include_in_schema=False)
async def metrics_page(request: Request[object, object, State], state: State) -> Response[bytes]:
    """The Prometheus exposition of this deployment's metrics."""
    services: Services = state.services
    refused = _refusal(services.settings.metrics, services.settings.trusted_proxies, request)
    if refused is not None:
        return refused  # type: ignore[return-value]
    body = await metrics.render(services)
    return Response(body, media_type=metrics.CONTENT_TYPE)


ROUTES = [metrics_page]
