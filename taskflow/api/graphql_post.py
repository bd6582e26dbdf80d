"""``POST /graphql`` without Litestar's dependency injection on the hot path.

strawberry's Litestar controller asks Litestar for four dependencies per request (its
context, a custom context, a root value and an empty sub-response); Litestar resolves the
independent ones as tasks of an anyio task group, and the sub-response factory, a plain
function, on a worker thread (``sync_to_thread=True``). Per request that is three tasks
and a thread hop: more than the rest of a small mutation's edge (bench/README.md,
"claimNext, where the time goes"). :func:`direct_post` gives the controller a POST
handler that builds the same sub-response and context inline and runs the same
``execute_request``; the GET handler (the IDE page) and the websocket route keep
strawberry's dependencies. The body is not parsed again: the body guard's parse of it
(``body_guard.PARSED``, checked there) is the request strawberry executes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from litestar import Request, post
from litestar.background_tasks import BackgroundTasks
from litestar.datastructures import Headers, State
from litestar.response import Response
from litestar.status_codes import HTTP_200_OK
from strawberry.http import GraphQLRequestData
from strawberry.litestar import BaseContext

from taskflow.api import body_guard

#: The app's context getter (headers and state, as for the websocket route).
ContextGetter = Callable[[Headers, State], Awaitable[BaseContext]]


def direct_post(controller: type[Any], context_getter: ContextGetter) -> type[Any]:
    """``controller`` (from ``make_graphql_controller``) with the inline POST handler."""

    class DirectPost(controller):  # type: ignore[misc]
        @post(status_code=HTTP_200_OK)
        async def handle_http_post(
            self, request: Request[Any, Any, Any], state: State
        ) -> Response[Any]:
            # What strawberry's dependencies give: an empty sub-response the resolvers may
            # set a status or headers on, and the context carrying the request and it.
            # One pass of the event loop first, as strawberry's dependency tasks gave: a pool
            # connection the database closed meanwhile has its end read (and is seen closed)
            # before this request can be handed it mid-error (tests/api/test_outage.py).
            await asyncio.sleep(0)
            response: Response[Any] = Response({}, background=BackgroundTasks([]))
            context = await context_getter(request.headers, state)
            context.request = request
            context.response = response
            self.temporal_response = response
            answer: Response[Any] = await self.execute_request(
                request=request, context=context, root_value=None
            )
            return answer

        async def parse_http_body(
            self, request: Any
        ) -> GraphQLRequestData | list[GraphQLRequestData]:
            parsed = request.request.scope.get(body_guard.PARSED)
            if parsed is None or request.method != "POST":
                found: GraphQLRequestData | list[GraphQLRequestData]
                found = await super().parse_http_body(request)
                return found
            transport = self._get_stream_transport_from_headers(request.headers)
            return GraphQLRequestData(
                query=parsed["query"],
                variables=parsed.get("variables"),
                operation_name=parsed.get("operationName"),
                extensions=parsed.get("extensions"),
                protocol=transport.protocol if transport else "http",
            )

    DirectPost.__name__ = controller.__name__
    DirectPost.__qualname__ = controller.__qualname__
    return DirectPost
