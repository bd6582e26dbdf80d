"""The MCP server of the agent tools: its read and write tools over the app's schema.

One server serves both transports: ``taskflow mcp`` (stdio, the token given when it starts)
and ``/mcp`` in the app (streamable HTTP, the token of each request's ``Authorization``
header). Tools never keep a principal between calls: each call is authenticated as a GraphQL
request is, so a deactivated principal or a revoked token stops at the next call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from strawberry import Schema

from taskflow.api.mcp import calls, read_tools, write_tools
from taskflow.service.common.container import Services

NAME = "taskflow"
INSTRUCTIONS = (
    "taskflow runs human work with deadlines. Read with inbox, work, board, run, "
    "needsAttention and slaReport; the run tool lists the write tools you may call on a run "
    "(availableActions) with the expectedVersion to pass. Every write needs a reason, which "
    "goes on the run's timeline; a refused write changes nothing and answers its code and "
    "message."
)

#: The bearer token of a call (None: the call carries none).
TokenOf = Callable[[ToolContext[Any, Any]], "str | None"]


class Tools:
    """What every tool needs: the schema, the services and the caller's token."""

    def __init__(
        self, schema: Schema, services_of: Callable[[], Services], token_of: TokenOf
    ) -> None:
        self._schema = schema
        self._services_of = services_of
        self._token_of = token_of

    def services(self) -> Services:
        return self._services_of()

    def token(self, ctx: ToolContext[Any, Any]) -> str:
        """The call's bearer token; UNAUTHENTICATED when it carries none."""
        found = self._token_of(ctx)
        if not found:
            raise calls.refused(
                "UNAUTHENTICATED",
                "The agent tools need a staff token: 'Authorization: Bearer <token>' over "
                "HTTP, TASKFLOW_TOKEN for taskflow mcp (mint one with taskflow token <id>).",
            )
        return found

    async def ask(
        self, ctx: ToolContext[Any, Any], document: str, variables: dict[str, Any]
    ) -> dict[str, Any]:
        """``document`` run as the call's principal."""
        return await calls.run(self._schema, self.services(), self.token(ctx), document, variables)


def build(schema: Schema, services_of: Callable[[], Services], token_of: TokenOf) -> MCPServer[Any]:
    """The server with every tool, answering from ``schema`` for ``token_of``'s caller."""
    server: MCPServer[Any] = MCPServer(NAME, instructions=INSTRUCTIONS)
    tools = Tools(schema, services_of, token_of)
    read_tools.register(server, tools.ask, tools)
    write_tools.register(server, tools)
    return server
