"""The write tools: claim, release, assign, complete, raiseEvent, retryStep, pauseClocks,
resumeClocks. One target each (there are no bulk tools), each with a required ``reason``
and ``expectedVersion``.

A call is refused, changing nothing, unless its principal opted in to agent writes on the
target's workflow (an ``agent`` grant, ``core/access/access.may_act_as_agent``); then it runs
the GraphQL mutation a person would send, so the same use case and rules decide, and every
timeline line it writes carries ``"via": "mcp:<client>"`` and the reason.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
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


def _arg(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default
    )


_SLOT_ID, _RUN_ID = _arg("slotId", str), _arg("runId", str)
_VERSION, _REASON = _arg("expectedVersion", int), _arg("reason", str)
_PAYLOAD = _arg("payload", dict[str, Any] | None, None)


@dataclass(frozen=True)
class _Tool:
    """One write tool: its arguments (the input schema, in order) and the mutation it runs."""

    name: str
    description: str
    annotations: mcp_types.ToolAnnotations
    document: str
    arguments: tuple[inspect.Parameter, ...]
    #: The arguments the mutation's input takes, as given (see :func:`_input`).
    input: tuple[str, ...]
    #: The function name the input and output schemas' titles carry (default: ``name``).
    function: str = ""

    @property
    def target(self) -> tuple[str, str]:
        """("slot" or "run", the argument naming it)."""
        return ("slot", "slotId") if self.arguments[0].name == "slotId" else ("run", "runId")


_TOOLS = (
    _Tool(
        "claim",
        "Claim an open slot "
        "(slotId, as the run or inbox tool gave it) for yourself. expectedVersion: "
        "the slot's version you read; refused (STALE_VERSION) if it moved.",
        _write(destructive=False),
        documents.CLAIM,
        (_SLOT_ID, _VERSION, _REASON),
        ("slotId", "expectedVersion"),
    ),
    _Tool(
        "release",
        "Put a slot you hold (or delegate) back in the pool. expectedVersion: the slot's version.",
        _write(destructive=True),
        documents.RELEASE,
        (_SLOT_ID, _VERSION, _REASON),
        ("slotId", "expectedVersion", "reason"),
    ),
    _Tool(
        "assign",
        "Hand a slot to a "
        "candidate (to: their principal id), as its holder or a delegate. "
        "expectedVersion: the slot's version.",
        _write(destructive=True),
        documents.ASSIGN,
        (_SLOT_ID, _arg("to", str), _VERSION, _REASON),
        ("slotId", "to", "expectedVersion", "reason"),
    ),
    _Tool(
        "complete",
        "Complete a slot with "
        "its event's payload (a JSON object); the run moves on and cannot be moved "
        "back. expectedVersion: the slot's version.",
        _write(destructive=True),
        documents.COMPLETE,
        (_SLOT_ID, _VERSION, _REASON, _PAYLOAD, _arg("event", str | None, None)),
        ("slotId", "expectedVersion", "payload", "event"),
    ),
    _Tool(
        "raiseEvent",
        "Raise an event on one "
        "run (runId): it completes the slot waiting for it, or the run keeps it. "
        "expectedVersion: the run's version.",
        _write(destructive=True),
        documents.RAISE_EVENT,
        (
            _RUN_ID,
            _arg("event", str),
            _VERSION,
            _REASON,
            _PAYLOAD,
            _arg("slotName", str | None, None),
        ),
        ("event", "payload", "target", "expectedVersion"),
    ),
    _Tool(
        "retryStep",
        "Run a PARKED "
        "automatic step (stepId) of a run (runId) again, due now (leads, managers, "
        "admins). expectedVersion: the run's version.",
        _write(destructive=False),
        documents.RETRY_STEP,
        (_RUN_ID, _arg("stepId", str), _VERSION, _REASON),
        ("stepId", "expectedVersion", "reason"),
    ),
    *(
        _Tool(
            verb,
            f"{what} clocks of a run's current slots (leads, managers, admins). "
            "expectedVersion: the run's version.",
            _write(destructive=False, idempotent=True),
            document,
            (_RUN_ID, _VERSION, _REASON),
            ("runId", "expectedVersion", "reason"),
            function="clocks",
        )
        for verb, what, document in (
            ("pauseClocks", "Pause the running", documents.PAUSE_CLOCKS),
            ("resumeClocks", "Resume the paused", documents.RESUME_CLOCKS),
        )
    ),
)


def _input(spec: _Tool, given: dict[str, Any]) -> dict[str, Any]:
    """The mutation's input from the tool's arguments (``target``: the run and its slot)."""
    given = given | {"target": {"runId": given.get("runId"), "slotName": given.get("slotName")}}
    return {key: given.get(key) for key in spec.input}


def register(server: MCPServer[Any], tools: Tools) -> None:
    """Add the write tools to ``server``."""
    for spec in _TOOLS:
        _add(server, tools, spec)


def _add(server: MCPServer[Any], tools: Tools, spec: _Tool) -> None:
    kind, named_by = spec.target

    async def tool(ctx: ToolContext[Any, Any], **given: Any) -> dict[str, Any]:
        return await _act(
            tools,
            ctx,
            (kind, given[named_by]),
            given["reason"],
            (spec.document, spec.name),
            _input(spec, given),
            step_id=given.get("stepId"),
        )

    # The SDK derives the tool's input schema from its signature: the declared arguments.
    arguments = (_arg("ctx", ToolContext[Any, Any]), *spec.arguments)
    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        arguments, return_annotation=dict[str, Any]
    )
    tool.__annotations__ = {a.name: a.annotation for a in arguments} | {"return": dict[str, Any]}
    tool.__name__ = tool.__qualname__ = spec.function or spec.name
    server.add_tool(
        calls.answered(tool),
        name=spec.name,
        description=spec.description,
        annotations=spec.annotations,
    )
