"""Running a tool's GraphQL document as its caller, and shaping what comes back.

The document runs through the app's own schema with a context carrying the caller's bearer
token, exactly as ``POST /graphql`` would run it: authentication, access rules, limits and
refusals are the GraphQL API's. A refusal (a payload implementing ``Refusal``, or a GraphQL
error such as UNAUTHENTICATED) becomes a tool error whose text is ``{"code", "message"}``
and the refusal's facts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec

import mcp_types
from mcp.server.mcpserver import Context as ToolContext
from strawberry import Schema

from taskflow.api.graphql import request
from taskflow.core.delivery import redact
from taskflow.service.common.container import Services

#: What a client's name may keep on the timeline (``mcp:<client>``): the rest becomes ``-``.
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: A client that did not name itself (a stateless HTTP call without client info).
UNNAMED = "unknown"


P = ParamSpec("P")


class Refused(Exception):  # control flow inside a tool call, answered by :func:`answered`
    """A refusal a tool answers as its error: its code, its words and its facts."""

    def __init__(self, code: str, message: str, **facts: Any) -> None:
        super().__init__(message)
        self.answer = {"code": code, "message": message, **facts}


def refused(code: str, message: str, **facts: Any) -> Refused:
    """The refusal ``code`` with ``message`` (and the refusal's typed facts)."""
    return Refused(code, message, **facts)


def answered(tool: Callable[P, Awaitable[dict[str, Any]]]) -> Callable[P, Awaitable[Any]]:
    """``tool`` answering a :class:`Refused` as the protocol's tool error (``isError``), its
    text exactly the refusal's JSON (the SDK's own tool errors prefix their words)."""

    @functools.wraps(tool)
    async def call(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return await tool(*args, **kwargs)
        except Refused as exc:
            text = json.dumps(exc.answer)
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=text)], is_error=True
            )

    return call


def client_name(ctx: ToolContext[Any, Any]) -> str:
    """The calling client's name as its ``initialize`` (or the request's envelope) gave it."""
    params = ctx.session.client_params
    name = params.client_info.name if params is not None else ""
    cleaned = _NAME_UNSAFE.sub("-", name).strip("-")[:64]
    return cleaned or UNNAMED


async def run(
    schema: Schema, services: Services, token: str, document: str, variables: Mapping[str, Any]
) -> dict[str, Any]:
    """``document`` run as the token's principal: its data, or a tool error for an error."""
    context = request.context_for(services, f"Bearer {token}")
    result = await schema.execute(document, variable_values=dict(variables), context_value=context)
    if result.errors:
        first = result.errors[0]
        code = str((first.extensions or {}).get("code") or "INTERNAL")
        raise refused(code, first.message)
    assert result.data is not None
    return result.data


def unless_refused(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A mutation's payload as the tool's answer; a refusal raised as the tool error."""
    if "code" in payload and "message" in payload:
        facts = {k: v for k, v in payload.items() if k not in ("__typename", "code", "message")}
        raise refused(str(payload["code"]), str(payload["message"]), **facts)
    return {k: v for k, v in payload.items() if k != "__typename"}


def answer(data: Any, payloads: bool) -> dict[str, Any]:
    """A tool's answer (a GraphQL object) as :func:`shown`."""
    return dict(shown(data, payloads))


def shown(data: Any, payloads: bool) -> Any:
    """``data`` as the agent sees it: unless it asked for payloads, every e-mail address and
    every URL's secret parts taken out of its text (``core/delivery/redact.py``)."""
    if payloads:
        return data
    if isinstance(data, str):
        return redact.redact_addresses(data)
    if isinstance(data, dict):
        return {k: shown(v, payloads) for k, v in data.items()}
    if isinstance(data, list):
        return [shown(v, payloads) for v in data]
    return data
