"""The Litestar application: GraphQL at /graphql, /health, and later pages."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

from litestar import Litestar, Request, get
from litestar.datastructures import Headers, State
from litestar.exceptions import HTTPException
from litestar.response import Response
from strawberry.litestar import make_graphql_controller

from taskflow.api import (
    access_log,
    body_guard,
    files,
    graphiql,
    graphql_post,
    graphql_socket,
    link_pages,
    metrics_page,
    report_pages,
)
from taskflow.api import limits as edge
from taskflow.api.asgi import ASGIApp, Receive, Scope, Send
from taskflow.api.console import cards as console_cards
from taskflow.api.console import live as console_live
from taskflow.api.console import pages as console_pages
from taskflow.api.console import runs as console_runs
from taskflow.api.graphql import request
from taskflow.api.graphql import schema as graphql_schema
from taskflow.api.graphql.common.context import Context
from taskflow.api.mcp import http as mcp_http
from taskflow.service.access import acting
from taskflow.service.common import outage
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics

log = logging.getLogger("taskflow.api")

#: Yields the services for the app's lifetime (opens and closes what it owns).
ServicesProvider = Callable[[], AbstractAsyncContextManager[Services]]


def _services(state: State) -> Services:
    services: Services = state.services
    return services


async def _graphql_context(headers: Headers, state: State) -> Context:
    # strawberry's dependency (the IDE page): Litestar wants the
    # reserved parameter typed as its Headers.
    return await _context_of(headers, state)


async def _context_of(headers: Mapping[str, str], state: State) -> Context:
    # headers/state (not request) so one getter serves strawberry's GET route and the direct
    # POST handler (api/graphql_post.py). Awaited in the request's task (graphql/request.py).
    return request.context_for(
        _services(state), headers.get("authorization"), headers.get("x-request-id")
    )


@get("/health", include_in_schema=False)
async def health(state: State) -> Response[dict[str, str]]:
    """Liveness and database reachability, for load balancers and operators."""
    reachable = await _services(state).db.ping()
    body = {
        "status": "ok" if reachable else "degraded",
        "database": "reachable" if reachable else "unreachable",
    }
    if reachable:
        return Response(body, status_code=200)
    return Response(body, status_code=503, headers={"Retry-After": str(outage.RETRY_AFTER_SECONDS)})


def _outage_answer(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Uncaught outage errors (pages): 503 with Retry-After; anything else stays a 500."""
    if isinstance(error, HTTPException):
        return Response({"detail": error.detail}, status_code=error.status_code)
    if not outage.is_unavailable(error):
        log.error("unexpected error on a page (%s)", type(error).__name__, exc_info=error)
        return Response(
            "Something went wrong; nothing was saved. Try again in a few minutes.\n",
            status_code=500,
            media_type="text/plain",
        )
    log.warning("page request: database unavailable (%s)", type(error).__name__)
    return Response(
        outage.MESSAGE + "\n",
        status_code=503,
        media_type="text/plain",
        headers={"Retry-After": str(outage.RETRY_AFTER_SECONDS)},
    )


def create_app(
    provide_services: ServicesProvider | None = None,
    *,
    services: Services | None = None,
    dev: bool = True,
    max_depth: int = graphql_schema.MAX_DEPTH,
    introspection: bool | None = None,
    limits: edge.Limits | None = None,
) -> Litestar:
    """The ASGI app.

    Either ``provide_services`` runs for the app's lifespan (the server opens and
    closes its pool on its own event loop), or ready ``services`` are given (tests,
    whose fixtures own the pool). ``introspection`` defaults to the given services'
    setting (``TASKFLOW_GRAPHQL_INTROSPECTION``), else to ``dev``. Litestar's OpenAPI
    pages (``/schema``) are never served: the API is GraphQL, and the pages are not API.
    """
    if (provide_services is None) == (services is None):
        raise ValueError("pass exactly one of provide_services and services")

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if provide_services is None:
            yield
            return
        try:
            async with provide_services() as provided:
                app.state.services = provided
                # What was loaded to get here (modules, the schema, definitions, calendars)
                # lives as long as the process: out of the collector's sight, its full passes
                # stay short (they took 0.4-0.7 s every few seconds under 1 000 live
                # subscriptions, stalling every request; bench/README.md, "Live").
                gc.freeze()
                yield
        finally:
            metrics.process_exit()

    if introspection is None:
        introspection = services.settings.introspection if services is not None else dev
    caps = limits or edge.Limits()
    schema = graphql_schema.build_schema(
        max_depth=max_depth, introspection=introspection, limits=caps
    )
    graphql = make_graphql_controller(
        schema,
        path="/graphql",
        context_getter=_graphql_context,
        graphql_ide="graphiql" if dev else None,
        allow_queries_via_get=False,
        subscription_protocols=(),
    )
    graphql = graphql_socket.subscriptions_only(
        graphql_post.direct_post(graphql, _context_of), caps
    )
    if dev:
        graphql = graphiql.offline(graphql)
    app = Litestar(
        route_handlers=[
            graphql,
            health,
            *link_pages.ROUTES,
            *files.ROUTES,
            *report_pages.ROUTES,
            *console_pages.ROUTES,
            *console_runs.ROUTES,
            *console_cards.ROUTES,
            *console_live.routes(schema, caps),
            *metrics_page.ROUTES,
            # The agent tools answer from the same schema (docs/agents.md).
            mcp_http.route(schema, lambda: _services(app.state)),
            *([graphiql.assets_router()] if dev else []),
        ],
        lifespan=[lifespan],
        state=State({"services": services}) if services is not None else None,
        debug=False,
        openapi_config=None,
        logging_config=None,  # taskflow.logs formats every line; Litestar's would replace it
        middleware=[cast(Any, body_guard.guard(caps, then=graphql_post.shortcut))],
        exception_handlers={
            kind: _outage_answer for kind in outage.OUTAGE_ERRORS if issubclass(kind, Exception)
        },
    )
    # The access line wraps the whole app, not as a middleware: Litestar runs middleware for
    # matched routes only, so a 404 (no route) or 405 would go unlogged.
    app.asgi_handler = cast(Any, access_log.wrap(_in_request_scope(cast(Any, app.asgi_handler))))
    return app


def _in_request_scope(app: ASGIApp) -> ASGIApp:
    """``app`` with each request (HTTP or WebSocket) in its own workspace scope
    (``acting.request_scope``)."""

    async def scoped(scope: Scope, receive: Receive, send: Send) -> None:
        with acting.request_scope():
            await app(scope, receive, send)

    return scoped
