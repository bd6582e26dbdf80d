"""The Litestar application: GraphQL at /graphql, /health, and later pages."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.response import Response
from strawberry.litestar import make_graphql_controller

from taskflow.api.graphql import schema as graphql_schema
from taskflow.api.graphql.context import Context
from taskflow.service.container import Services

log = logging.getLogger("taskflow.api")

#: Yields the services for the app's lifetime (opens and closes what it owns).
ServicesProvider = Callable[[], AbstractAsyncContextManager[Services]]


def _services(state: State) -> Services:
    services: Services = state.services
    return services


async def _graphql_context(request: Request[Any, Any, Any]) -> Context:
    return Context(
        services=_services(request.app.state),
        request_id=request.headers.get("x-request-id") or uuid.uuid4().hex[:16],
        authorization=request.headers.get("authorization"),
    )


@get("/health", include_in_schema=False)
async def health(state: State) -> Response[dict[str, str]]:
    """Liveness and database reachability, for load balancers and operators."""
    reachable = await _services(state).db.ping()
    body = {"status": "ok" if reachable else "degraded", "database": "reachable" if reachable else "unreachable"}
    return Response(body, status_code=200 if reachable else 503)


def create_app(provide_services: ServicesProvider, *, dev: bool = True) -> Litestar:
    """The ASGI app; ``provide_services`` runs for the app's lifespan."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with provide_services() as services:
            app.state.services = services
            yield

    graphql = make_graphql_controller(
        graphql_schema.build_schema(),
        path="/graphql",
        context_getter=_graphql_context,
        graphql_ide="graphiql" if dev else None,
        allow_queries_via_get=False,
    )
    return Litestar(
        route_handlers=[graphql, health],
        lifespan=[lifespan],
        debug=False,
    )
