"""``POST /graphql`` without Litestar's dependency injection or strawberry's HTTP view on
the hot path.

strawberry's Litestar controller asks Litestar for four dependencies per request (its
context, a custom context, a root value and an empty sub-response); Litestar resolves the
independent ones as tasks of an anyio task group, and the sub-response factory, a plain
function, on a worker thread (``sync_to_thread=True``). Per request that is three tasks
and a thread hop: more than the rest of a small mutation's edge (bench/README.md,
"claimNext, where the time goes"). :func:`direct_post` gives the controller a POST
handler that builds the same sub-response and context inline. The GET handler (the IDE
page) keeps strawberry's dependencies (the socket route refuses every upgrade:
``api/graphql_socket.py``). The body is not parsed again: the body guard's parse of it
(``body_guard.PARSED``, checked there) is the request strawberry executes.

The common request (a JSON body the guard parsed, one operation, no streaming ``Accept``
header) is answered without strawberry's HTTP view (its request adapter, its parse and
dispatch layers, Litestar's response conversion): the handler calls the schema's
``execute`` with what the view would pass, formats the result with the view's own
``process_result`` and ``encode_json``, and answers with :class:`JSONAnswer`, the same
status, headers and bytes Litestar's response would send. Anything else (no parsed body,
a streaming transport, a schema with incremental results; a cookie or a content
header a resolver set) goes through strawberry's view as before. The body guard hands a
body it parsed to :func:`shortcut`, which calls the handler's :meth:`answered` itself,
without Litestar's route handling (the handler takes only the request; the app's state is
read from the app, the context's headers from the scope). ``FAST_PATH = False`` (read when
the app is built) sends every request through Litestar's route and strawberry's view:
``tests/api/test_graphql_post.py`` compares the two, byte for byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from litestar import Request, post
from litestar.background_tasks import BackgroundTasks
from litestar.datastructures import State
from litestar.enums import MediaType
from litestar.response import Response
from litestar.status_codes import HTTP_200_OK
from litestar.types import ASGIApp, Receive, Scope, Send
from strawberry.exceptions import MissingQueryError
from strawberry.http import GraphQLRequestData
from strawberry.litestar import BaseContext
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from taskflow.api import asgi, body_guard
from taskflow.api.graphql.common.context import Context
from taskflow.api.graphql.slots import claim_fast

#: The app's context getter (headers and state, as for strawberry's GET route).
ContextGetter = Callable[[Mapping[str, str], State], Awaitable[BaseContext]]

#: Whether parsed POSTs skip strawberry's HTTP view (see the module's docstring).
FAST_PATH = True

_JSON = MediaType.JSON.value.encode("latin-1")
#: Headers whose value the answer sets itself (a resolver's own takes the general path).
_OWN_HEADERS = frozenset({"content-type", "content-length"})


class JSONAnswer:
    """An ASGI answer with a JSON body: what Litestar's ``ASGIResponse`` sends for strawberry's
    ``create_response`` (the sub-response's headers, then content type and length; its
    status when set; its background tasks after the body), without its header structures."""

    __slots__ = ("background", "body", "headers", "status")

    def __init__(self, body: bytes, sub_response: Response[Any]) -> None:
        self.body = body
        self.status = sub_response.status_code or HTTP_200_OK
        self.headers = [
            (str(name).lower().encode("latin-1"), str(value).encode("latin-1"))
            for name, value in sub_response.headers.items()
        ]
        self.headers.append((b"content-type", _JSON))
        self.headers.append((b"content-length", str(len(body)).encode("latin-1")))
        self.background = sub_response.background

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})
        if self.background is not None and (
            not isinstance(self.background, BackgroundTasks) or self.background.tasks
        ):
            await self.background()


def first_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by (lower-case) name, the first of repeated ones: what
    ``get`` on Litestar's ``Headers`` answers, without building its multidict."""
    found: dict[str, str] = {}
    for name, value in scope["headers"]:
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found


def _answerable(sub_response: Response[Any]) -> bool:
    """Whether :class:`JSONAnswer` sends what strawberry's response would for this one."""
    if sub_response.cookies:
        return False
    return not any(str(name).lower() in _OWN_HEADERS for name in sub_response.headers)


async def shortcut(
    app: asgi.ASGIApp, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send
) -> None:
    """The body guard's next step for a body it parsed: the POST handler's answer, without
    Litestar's route handling (its handler lookup, parameters, signature model and response
    conversion: the handler takes nothing but the request and answers an ASGI app). The
    router has put the handler in the scope (and the route's exception handlers, which the
    app's exception middleware applies to anything raised here, as the route's would); any
    other route, or the view when ``FAST_PATH`` was off, is called as ``app``."""
    handler: Any = scope.get("route_handler")
    view: Any = getattr(getattr(handler, "fn", None), "__self__", None)
    if handler is None or not getattr(view, "direct", False):
        await app(scope, receive, send)
        return
    request = handler.resolve_request_class()(scope=scope, receive=receive, send=send)
    answer: Any = await view.answered(request)
    await answer(scope, receive, send)


def direct_post(controller: type[Any], context_getter: ContextGetter) -> type[Any]:
    """``controller`` (from ``make_graphql_controller``) with the inline POST handler."""
    # An incremental (@defer/@stream) result is streamed by strawberry's view alone.
    fast = FAST_PATH and not controller.schema.config.enable_experimental_incremental_execution

    class DirectPost(controller):  # type: ignore[misc]
        #: Whether the body guard may call :meth:`answered` itself (see :func:`shortcut`).
        direct = fast

        @post(status_code=HTTP_200_OK)
        async def handle_http_post(self, request: Request[Any, Any, Any]) -> ASGIApp:
            return await self.answered(request)

        async def answered(self, request: Request[Any, Any, Any]) -> ASGIApp:
            """The handler's answer (an ASGI app) to ``request``."""
            # What strawberry's dependencies give: an empty sub-response the resolvers may
            # set a status or headers on, and the context carrying the request and it.
            # One pass of the event loop first, as strawberry's dependency tasks gave: a pool
            # connection the database closed meanwhile has its end read (and is seen closed)
            # before this request can be handed it mid-error (tests/api/test_outage.py).
            # The app's state is read from the app, not asked of Litestar as a parameter (it
            # would copy it into a new State, checked by its signature model, per request).
            await asyncio.sleep(0)
            response: Response[Any] = Response({}, background=BackgroundTasks([]))
            context = await context_getter(first_headers(request.scope), request.app.state)
            context.request = request
            context.response = response
            self.temporal_response = response
            parsed = cast(
                "dict[str, Any] | None", request.scope.get(body_guard.PARSED) if fast else None
            )
            if parsed is not None and not self._streams(request):
                return await self._answer(request, parsed, context, response)
            viewed: Response[Any] = await self.execute_request(
                request=request, context=context, root_value=None
            )
            return viewed.to_asgi_response(app=None, request=request)

        def _streams(self, request: Request[Any, Any, Any]) -> bool:
            """Whether the request's ``Accept`` header asks for a streaming transport."""
            if not self._stream_transport_map:
                return False
            return self._get_stream_transport_from_headers(request.headers) is not None

        async def _answer(
            self,
            request: Request[Any, Any, Any],
            parsed: dict[str, Any],
            context: BaseContext,
            sub_response: Response[Any],
        ) -> ASGIApp:
            """What strawberry's view answers for a parsed body."""
            fast = await self._claimed_fast(parsed, context)
            if fast is not None:
                data = await self.process_result(request=request, result=fast)
                return self._encoded(data, sub_response, request)
            try:
                result = await self.schema.execute(
                    parsed["query"],
                    root_value=None,
                    variable_values=parsed.get("variables"),
                    context_value=context,
                    operation_name=parsed.get("operationName"),
                    allowed_operation_types=OperationType.from_http("POST"),
                    operation_extensions=parsed.get("extensions"),
                )
            except CannotGetOperationTypeError as e:
                return self._refused(request, e.as_http_error_reason())
            except InvalidOperationTypeError as e:
                return self._refused(request, e.as_http_error_reason("POST"))
            except MissingQueryError:
                return self._refused(request, "No GraphQL query found in the request")
            assert isinstance(result, ExecutionResult)  # not incremental (see direct_post)
            data = await self.process_result(request=request, result=result)
            if result.errors:
                self._handle_errors(result.errors, data)
            return self._encoded(data, sub_response, request)

        def _encoded(
            self, data: Any, sub_response: Response[Any], request: Request[Any, Any, Any]
        ) -> ASGIApp:
            """The answer carrying ``data`` (the view's ``process_result``)."""
            if not _answerable(sub_response):
                created: Response[Any] = self.create_response(
                    response_data=data, sub_response=sub_response
                )
                return created.to_asgi_response(app=None, request=request)
            encoded = self.encode_json(data)
            return JSONAnswer(
                encoded.encode() if isinstance(encoded, str) else encoded, sub_response
            )

        async def _claimed_fast(
            self, parsed: dict[str, Any], context: BaseContext
        ) -> ExecutionResult | None:
            """A planned ``claimNext``'s result, answered by ``claim_fast`` (None: execute)."""
            query, name = parsed["query"], parsed.get("operationName")
            if (
                not isinstance(query, str)
                or not (name is None or isinstance(name, str))
                or parsed.get("variables")
                or parsed.get("extensions") is not None
            ):
                return None
            found = claim_fast.plan(self.schema, query, name)
            if found is None:
                return None
            data = await claim_fast.claimed(found, cast("Context", context))
            return None if data is None else ExecutionResult(data=data, errors=None)

        @staticmethod
        def _refused(request: Request[Any, Any, Any], reason: str) -> ASGIApp:
            """strawberry's answer to a request it cannot execute: its reason, in plain text."""
            refused = Response(reason, status_code=400, media_type=MediaType.TEXT)
            return refused.to_asgi_response(app=None, request=request)

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
