"""The write tools: claim, release, assign, complete, raiseEvent, retryStep, pauseClocks,
resumeClocks. One target each (there are no bulk tools), each with a required ``reason``
and ``expectedVersion``.

A call is refused, changing nothing, unless its principal opted in to agent writes on the
target's workflow (an ``agent`` grant, ``core/access/access.may_act_as_agent``); then it runs
the GraphQL mutation a person would send, so the same use case and rules decide, and every
timeline line it writes carries ``"via": "mcp:<client>"`` and the reason.
"""

from __future__ import annotations

from typing import Any, Protocol

import mcp_types
from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer

from taskflow import errors
from taskflow.api.mcp import calls, documents
from taskflow.service.access import access, principals
from taskflow.service.common.container import Services
from taskflow.service.runs import via

#: The longest reason kept (the timeline's reason is words, not a document).
REASON_MAX = 500


class Tools(Protocol):
    """What the write tools need of the server (``server.Tools``)."""

    def services(self) -> Services: ...

    def token(self, ctx: ToolContext[Any, Any]) -> str: ...

    async def ask(
        self, ctx: ToolContext[Any, Any], document: str, variables: dict[str, Any]
    ) -> dict[str, Any]: ...


def _write(*, destructive: bool, idempotent: bool = False) -> mcp_types.ToolAnnotations:
    return mcp_types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def _reason(reason: str) -> str:
    text = reason.strip()
    if not text or len(text) > REASON_MAX:
        raise calls.refused(
            "INVALID_INPUT",
            f"Give a reason of 1-{REASON_MAX} characters: it goes on the run's timeline.",
            field="reason",
        )
    return text


async def _act(
    tools: Tools,
    ctx: ToolContext[Any, Any],
    target: tuple[str, str],
    reason: str,
    mutation: tuple[str, str],
    given: dict[str, Any],
    step_id: str | None = None,
) -> dict[str, Any]:
    """Check the opt-in on the target's workflow, then run the mutation via MCP.

    ``target``: ("slot" or "run", its global id); ``mutation``: (document, root field)."""
    why = _reason(reason)
    kind, target_id = target
    services = tools.services()
    try:
        me = await principals.authenticate(services, tools.token(ctx))
    except errors.TaskflowError as exc:
        raise calls.refused(exc.code, exc.message) from None
    document = documents.SLOT_WORKFLOW if kind == "slot" else documents.RUN_WORKFLOW
    found = (await tools.ask(ctx, document, {"id": target_id}))[kind]
    if found is None or (step_id is not None and {"id": step_id} not in found["steps"]):
        what = f"step {step_id!r} of run" if step_id is not None else kind
        raise calls.refused("NOT_FOUND", f"No {what} has the id {target_id!r}.")
    try:
        access.require_agent(me, found["workflow"])
    except errors.Forbidden as exc:
        raise calls.refused(exc.code, exc.message) from None
    document, field = mutation
    with via.acting_via(f"mcp:{calls.client_name(ctx)}", why):
        data = await tools.ask(ctx, document, {"input": given})
    return calls.unless_refused(data[field])


def register(server: MCPServer[Any], tools: Tools) -> None:
    """Add the write tools to ``server``."""

    @server.tool(
        annotations=_write(destructive=False),
        description="Claim an open slot "
        "(slotId, as the run or inbox tool gave it) for yourself. expectedVersion: "
        "the slot's version you read; refused (STALE_VERSION) if it moved.",
    )
    @calls.answered
    async def claim(
        ctx: ToolContext[Any, Any], slotId: str, expectedVersion: int, reason: str
    ) -> dict[str, Any]:
        given = {"slotId": slotId, "expectedVersion": expectedVersion}
        return await _act(tools, ctx, ("slot", slotId), reason, (documents.CLAIM, "claim"), given)

    @server.tool(
        annotations=_write(destructive=True),
        description="Put a slot you hold "
        "(or delegate) back in the pool. expectedVersion: the slot's version.",
    )
    @calls.answered
    async def release(
        ctx: ToolContext[Any, Any], slotId: str, expectedVersion: int, reason: str
    ) -> dict[str, Any]:
        given = {"slotId": slotId, "expectedVersion": expectedVersion, "reason": reason}
        return await _act(
            tools, ctx, ("slot", slotId), reason, (documents.RELEASE, "release"), given
        )

    @server.tool(
        annotations=_write(destructive=True),
        description="Hand a slot to a "
        "candidate (to: their principal id), as its holder or a delegate. "
        "expectedVersion: the slot's version.",
    )
    @calls.answered
    async def assign(
        ctx: ToolContext[Any, Any], slotId: str, to: str, expectedVersion: int, reason: str
    ) -> dict[str, Any]:
        given = {"slotId": slotId, "to": to, "expectedVersion": expectedVersion, "reason": reason}
        return await _act(tools, ctx, ("slot", slotId), reason, (documents.ASSIGN, "assign"), given)

    @server.tool(
        annotations=_write(destructive=True),
        description="Complete a slot with "
        "its event's payload (a JSON object); the run moves on and cannot be moved "
        "back. expectedVersion: the slot's version.",
    )
    @calls.answered
    async def complete(
        ctx: ToolContext[Any, Any],
        slotId: str,
        expectedVersion: int,
        reason: str,
        payload: dict[str, Any] | None = None,
        event: str | None = None,
    ) -> dict[str, Any]:
        given = {
            "slotId": slotId,
            "expectedVersion": expectedVersion,
            "payload": payload,
            "event": event,
        }
        return await _act(
            tools, ctx, ("slot", slotId), reason, (documents.COMPLETE, "complete"), given
        )

    @server.tool(
        annotations=_write(destructive=True),
        description="Raise an event on one "
        "run (runId): it completes the slot waiting for it, or the run keeps it. "
        "expectedVersion: the run's version.",
    )
    @calls.answered
    async def raiseEvent(
        ctx: ToolContext[Any, Any],
        runId: str,
        event: str,
        expectedVersion: int,
        reason: str,
        payload: dict[str, Any] | None = None,
        slotName: str | None = None,
    ) -> dict[str, Any]:
        given = {
            "event": event,
            "payload": payload,
            "target": {"runId": runId, "slotName": slotName},
            "expectedVersion": expectedVersion,
        }
        return await _act(
            tools, ctx, ("run", runId), reason, (documents.RAISE_EVENT, "raiseEvent"), given
        )

    @server.tool(
        annotations=_write(destructive=False),
        description="Run a PARKED "
        "automatic step (stepId) of a run (runId) again, due now (leads, managers, "
        "admins). expectedVersion: the run's version.",
    )
    @calls.answered
    async def retryStep(
        ctx: ToolContext[Any, Any], runId: str, stepId: str, expectedVersion: int, reason: str
    ) -> dict[str, Any]:
        given = {"stepId": stepId, "expectedVersion": expectedVersion, "reason": reason}
        return await _act(
            tools,
            ctx,
            ("run", runId),
            reason,
            (documents.RETRY_STEP, "retryStep"),
            given,
            step_id=stepId,
        )

    for verb, pause in (("pauseClocks", True), ("resumeClocks", False)):
        _clock_tool(server, tools, verb, pause)


def _clock_tool(server: MCPServer[Any], tools: Tools, verb: str, pause: bool) -> None:
    document = documents.PAUSE_CLOCKS if pause else documents.RESUME_CLOCKS
    what = "Pause the running" if pause else "Resume the paused"

    async def clocks(
        ctx: ToolContext[Any, Any], runId: str, expectedVersion: int, reason: str
    ) -> dict[str, Any]:
        given = {"runId": runId, "expectedVersion": expectedVersion, "reason": reason}
        return await _act(tools, ctx, ("run", runId), reason, (document, verb), given)

    server.add_tool(
        calls.answered(clocks),
        name=verb,
        description=f"{what} clocks of a run's current slots (leads, managers, admins). "
        "expectedVersion: the run's version.",
        annotations=_write(destructive=False, idempotent=True),
    )
