"""The Litestar application: GraphQL at /graphql, /health, and later pages."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from litestar import Litestar, get
from litestar.datastructures import Headers, State
from litestar.response import Response
from strawberry.dataloader import DataLoader
from strawberry.litestar import make_graphql_controller

from taskflow.api import link_pages, metrics_page, report_pages
from taskflow.api.graphql import schema as graphql_schema
from taskflow.api.graphql import types
from taskflow.api.graphql.context import Context
from taskflow.service import metrics
from taskflow.service.container import Services

log = logging.getLogger("taskflow.api")

#: Yields the services for the app's lifetime (opens and closes what it owns).
ServicesProvider = Callable[[], AbstractAsyncContextManager[Services]]


def _services(state: State) -> Services:
    services: Services = state.services
    return services


async def _graphql_context(headers: Headers, state: State) -> Context:
    # headers/state (not request) so one getter serves HTTP and websocket routes.
    services = _services(state)

    async def load_runs(keys: list[str]) -> list[Any]:
        return await types.load_runs(services, keys)

    return Context(
        services=services,
        request_id=headers.get("x-request-id") or uuid.uuid4().hex[:16],
        authorization=headers.get("authorization"),
        loaders={"run": DataLoader(load_fn=load_runs)},
    )


@get("/health", include_in_schema=False)
async def health(state: State) -> Response[dict[str, str]]:
    """Liveness and database reachability, for load balancers and operators."""
    reachable = await _services(state).db.ping()
    body = {
        "status": "ok" if reachable else "degraded",
        "database": "reachable" if reachable else "unreachable",
    }
    return Response(body, status_code=200 if reachable else 503)


def create_app(
    provide_services: ServicesProvider | None = None,
    *,
    services: Services | None = None,
    dev: bool = True,
    max_depth: int = graphql_schema.MAX_DEPTH,
) -> Litestar:
    """The ASGI app.

    Either ``provide_services`` runs for the app's lifespan (the server opens and
    closes its pool on its own event loop), or ready ``services`` are given (tests,
    whose fixtures own the pool).
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
                yield
        finally:
            metrics.process_exit()

    graphql = make_graphql_controller(
        graphql_schema.build_schema(max_depth=max_depth),
        path="/graphql",
        context_getter=_graphql_context,
        graphql_ide="graphiql" if dev else None,
        allow_queries_via_get=False,
    )
    return Litestar(
        route_handlers=[
            graphql,
            health,
            *link_pages.ROUTES,
            *report_pages.ROUTES,
            *metrics_page.ROUTES,
        ],
        lifespan=[lifespan],
        state=State({"services": services}) if services is not None else None,
        debug=False,
    )
