"""``GET /metrics``: Prometheus metrics, behind ``TASKFLOW_METRICS`` (docs/operations.md).

``loopback`` serves clients on this machine only (a request forwarded by a
trusted proxy counts as coming from its client, so a proxy does not open it to
the world); ``token:<bearer>`` wants that bearer token; ``off`` answers 404.
"""

from __future__ import annotations

import hmac
import ipaddress

from litestar import Request, get
from litestar.datastructures import State
from litestar.response import Response

from taskflow import config
from taskflow.service import metrics
from taskflow.service.container import Services


def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refusal(setting: str, request: Request[object, object, State]) -> Response[str] | None:
    """The answer for a caller the setting does not let in (None: let in)."""
    mode, token = config.metrics_access(setting)
    if mode == "off":
        return Response("Not found.\n", status_code=404, media_type="text/plain")
    if token is None:
        if _loopback(request.client.host if request.client else None):
            return None
        return Response(
            "Metrics are served to clients on this machine only (TASKFLOW_METRICS=loopback); "
            "scrape from localhost, or set TASKFLOW_METRICS=token:<bearer> and send "
            "'Authorization: Bearer <bearer>'.\n",
            status_code=403,
            media_type="text/plain",
        )
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), token):
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
    refused = _refusal(services.settings.metrics, request)
    if refused is not None:
        return refused  # type: ignore[return-value]
    body = await metrics.render(services)
    return Response(body, media_type=metrics.CONTENT_TYPE)


ROUTES = [metrics_page]
