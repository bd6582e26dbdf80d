"""The read tools: inbox, work, board, run (with its available actions), needsAttention,
slaReport. Each answers what the same principal's GraphQL query answers, nothing more."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types
from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer

from taskflow import errors
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.runs import types as run_types
from taskflow.api.graphql.slots import slot_type
from taskflow.api.graphql.steps import steps as step_types
from taskflow.api.mcp import calls, documents
from taskflow.core.access import access as rules
from taskflow.service.access import principals
from taskflow.service.slots import actions

#: Runs a document for the calling tool's principal (see ``server.Tools``).
Ask = Callable[[ToolContext[Any, Any], str, dict[str, Any]], Awaitable[dict[str, Any]]]

READ = mcp_types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
PAYLOADS = (
    "includePayloads: true shows payloads, subject attributes and e-mail addresses where "
    "GraphQL shows them to you; otherwise they are left out or redacted."
)


def _page(first: int, after: str | None) -> dict[str, Any]:
    return {"first": first, "after": after}


def register(server: MCPServer[Any], ask: Ask, tools: Any) -> None:
    """Add the read tools to ``server`` (``tools``: the server's :class:`server.Tools`)."""

    @server.tool(
        annotations=READ,
        description="Your inbox: the open slots you may act on now, most urgent first. " + PAYLOADS,
    )
    @calls.answered
    async def inbox(
        ctx: ToolContext[Any, Any],
        first: int = 25,
        after: str | None = None,
        includePayloads: bool = False,
    ) -> dict[str, Any]:
        found = await ask(
            ctx, documents.INBOX, {**_page(first, after), "payloads": includePayloads}
        )
        return calls.answer(found["inbox"], includePayloads)

    @server.tool(
        annotations=READ,
        description="The work list of leads and team members: "
        "every live slot of what your grants reach (filter by workflow, team "
        "audience keys, atRisk). " + PAYLOADS,
    )
    @calls.answered
    async def work(
        ctx: ToolContext[Any, Any],
        workflow: str | None = None,
        audience: list[str] | None = None,
        atRisk: bool = False,
        first: int = 25,
        after: str | None = None,
        includePayloads: bool = False,
    ) -> dict[str, Any]:
        wanted = {"workflow": workflow, "audience": audience, "atRisk": atRisk}
        found = await ask(
            ctx,
            documents.WORK,
            {**_page(first, after), "filter": wanted, "payloads": includePayloads},
        )
        return calls.answer(found["work"], includePayloads)

    @server.tool(
        annotations=READ,
        description="A workflow's board: one card per run, in "
        "lanes by state, with the moves each may make now. " + PAYLOADS,
    )
    @calls.answered
    async def board(
        ctx: ToolContext[Any, Any],
        workflow: str,
        first: int = 25,
        after: str | None = None,
        includePayloads: bool = False,
    ) -> dict[str, Any]:
        found = await ask(
            ctx,
            documents.BOARD,
            {"workflow": workflow, **_page(first, after), "payloads": includePayloads},
        )
        return calls.answer(found["board"], includePayloads)

    @server.tool(
        annotations=READ,
        description="One run (its global id) with its slots, "
        "moves, steps, timeline and availableActions: the write tools you may call "
        "on it now, each with the expectedVersion to pass. " + PAYLOADS,
    )
    @calls.answered
    async def run(
        ctx: ToolContext[Any, Any], runId: str, includePayloads: bool = False
    ) -> dict[str, Any]:
        found = await ask(ctx, documents.RUN, {"id": runId, "payloads": includePayloads})
        if found["run"] is None:
            raise calls.refused("NOT_FOUND", f"No run has the id {runId!r}.")
        services, token = tools.services(), tools.token(ctx)
        me = await principals.authenticate(services, token)
        try:
            local = relay.local_id(runId, run_types.RUN, "runId")
            may = await actions.available(services, me, local)
        except errors.TaskflowError as exc:
            raise calls.refused(exc.code, exc.message) from None
        answer = calls.answer(found["run"], includePayloads)
        answer["agentWrites"] = rules.may_act_as_agent(me, found["run"]["workflow"])
        answer["availableActions"] = [_action(a, runId) for a in may]
        return answer

    @server.tool(
        annotations=READ,
        description="What waits for a person (dead timers, parked "
        "steps, stuck runs), oldest first: leads, managers and admins over their "
        "workflows.",
    )
    @calls.answered
    async def needsAttention(
        ctx: ToolContext[Any, Any],
        workflow: str | None = None,
        first: int = 25,
        after: str | None = None,
    ) -> dict[str, Any]:
        wanted = {"workflow": workflow} if workflow else None
        found = await ask(ctx, documents.NEEDS_ATTENTION, {**_page(first, after), "filter": wanted})
        return calls.answer(found["needsAttention"], False)

    @server.tool(
        annotations=READ,
        description="The SLA report from an instant (ISO 8601) "
        "to another (default now): per week, workflow, state and slot, opened, met, "
        "breached and the business-time percentiles (leads and managers).",
    )
    @calls.answered
    async def slaReport(
        ctx: ToolContext[Any, Any],
        since: str,
        until: str | None = None,
        workflow: str | None = None,
    ) -> dict[str, Any]:
        wanted = {"workflow": workflow} if workflow else None
        found = await ask(ctx, documents.SLA_REPORT, {"from": since, "to": until, "filter": wanted})
        return calls.answer(found["slaReport"], False)


def _action(action: actions.Action, run_id: str) -> dict[str, Any]:
    """One available action as the write tool's arguments (less the reason)."""
    args: dict[str, Any] = {"expectedVersion": action.version}
    if action.slot_id is not None:
        args["slotId"] = relay.to_global_id(slot_type.SLOT, action.slot_id)
    else:
        args["runId"] = run_id
    if action.step_id is not None:
        args["stepId"] = relay.to_global_id(step_types.TYPE_NAME, str(action.step_id))
    return {"tool": action.verb, "arguments": args}
