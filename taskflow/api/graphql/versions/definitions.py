"""The ``workflows`` query: every loaded definition, typed, plus its JSON document.

The document is exactly what ``taskflow show`` prints (the definition's JSON with its
digest); the typed fields are a reading of the same definition for frontends that
list states, lanes, slots and moves without parsing the document.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.definition import audience as au
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Move, Slot, State
from taskflow.core.definition.workflow import Definition


@strawberry.enum(description="What a state is for in a run's life.")
class StateKind(Enum):
    INITIAL = strawberry.enum_value("initial", description="Where every run starts.")
    WORK = strawberry.enum_value("work", description="A state between start and end.")
    TERMINAL = strawberry.enum_value("terminal", description="A run that enters it ends.")


@strawberry.type(description="An input field of a slot or move.")
class DefinitionField:
    name: str = strawberry.field(description="The field's name in the payload.")
    type: str = strawberry.field(description="Its type (text, number, date, choice, ...).")
    required: bool = strawberry.field(description="Whether the payload must carry it.")
    choices: list[str] = strawberry.field(description="The allowed values of a choice field.")
    label: str | None = strawberry.field(description="The label a form shows.")
    help: str | None = strawberry.field(description="Help text a form shows.")


@strawberry.type(description="A service-level milestone of a slot.")
class DefinitionMilestone:
    kind: str = strawberry.field(description="assigned (claimed) or finished (satisfied).")
    within: str = strawberry.field(description="The budget, readable (e.g. '4h business').")
    calendar: str | None = strawberry.field(description="The calendar it counts on, if its own.")
    forecast_alert: float | None = strawberry.field(
        description=(
            "The breach probability at which the forecast warns (clock.forecast_at_risk), if "
            "the milestone sets its own; null: the deployment's TASKFLOW_FORECAST_ALERT."
        )
    )


@strawberry.type(description="A slot as declared: a human task waiting for one event.")
class DefinitionSlot:
    name: str = strawberry.field(description="The slot's name.")
    label: str | None = strawberry.field(description="Its label for people.")
    description: str | None = strawberry.field(description="What it asks for.")
    waits_for: str = strawberry.field(description="The event that satisfies it.")
    fields: list[DefinitionField] = strawberry.field(description="The payload it takes.")
    candidates: str | None = strawberry.field(
        description="Who may take it, readable (e.g. 'role:finance and not subject.submitted_by')."
    )
    delegates: str | None = strawberry.field(description="Who may assign it, readable.")
    milestones: list[DefinitionMilestone] = strawberry.field(description="Its SLA milestones.")
    after: list[str] = strawberry.field(description="Slots of the state it waits for first.")
    for_each: str | None = strawberry.field(description="One slot per element of this, if set.")
    magic_link: bool = strawberry.field(description="Whether outsiders may do it by a link.")


@strawberry.type(description="A manual move out of a state.")
class DefinitionMove:
    name: str = strawberry.field(description="The move's name (as move() takes it).")
    label: str | None = strawberry.field(description="Its label for people.")
    to: str = strawberry.field(description="The state it goes to.")
    by: str | None = strawberry.field(description="Who may make it, readable (null: readers).")
    guard: str | None = strawberry.field(description="The condition it needs, readable.")
    fields: list[DefinitionField] = strawberry.field(description="The input it takes.")


@strawberry.type(description="A state of a workflow definition.")
class DefinitionState:
    name: str = strawberry.field(description="The state's name (a run's state, a board lane).")
    label: str | None = strawberry.field(description="Its label for people.")
    description: str | None = strawberry.field(description="What happens in it.")
    kind: StateKind = strawberry.field(description="Initial, work or terminal.")
    lane: int = strawberry.field(description="Its board lane: position in `lanes`, from 0.")
    pausing: bool = strawberry.field(description="Whether SLA clocks pause while a run is in it.")
    slots: list[DefinitionSlot] = strawberry.field(description="The slots opened on entry.")
    moves: list[DefinitionMove] = strawberry.field(description="Its manual moves.")
    routes: list[str] = strawberry.field(
        description="Where it goes when done, readable ('approved: when payload...')."
    )


@strawberry.type(description="One version of a workflow definition.")
class WorkflowVersion:
    version: int = strawberry.field(description="The version number.")
    digest: str = strawberry.field(description="sha256 of the document: what a run pins.")
    description: str | None = strawberry.field(description="What the workflow is for.")
    tracks: str = strawberry.field(description="The subject type its runs track.")
    calendar: str | None = strawberry.field(description="Its business calendar.")
    initial_state: str | None = strawberry.field(description="Where its runs start.")
    lanes: list[str] = strawberry.field(
        description="The board lanes: state names in definition order."
    )
    states: list[DefinitionState] = strawberry.field(description="Its states in order.")
    document: JSON = strawberry.field(
        description="The definition document with its digest, as `taskflow show` prints it."
    )


@strawberry.type(description="A workflow and every loaded version of it.")
class Workflow:
    name: str = strawberry.field(description="The workflow's name.")
    latest: WorkflowVersion = strawberry.field(description="Its newest loaded version.")
    versions: list[WorkflowVersion] = strawberry.field(description="Every version, oldest first.")


def _fields(found: Any) -> list[DefinitionField]:
    return [
        DefinitionField(
            name=f.name,
            type=f.type,
            required=f.required,
            choices=[str(c) for c in f.choices],
            label=f.label,
            help=f.help,
        )
        for f in found
    ]


def _who(value: au.Who | None) -> str | None:
    return au.describe(value) if value is not None else None


def _slot(slot: Slot) -> DefinitionSlot:
    return DefinitionSlot(
        name=slot.name,
        label=slot.label,
        description=slot.description,
        waits_for=slot.waits_for,
        fields=_fields(slot.fields),
        candidates=_who(slot.candidates),
        delegates=_who(slot.delegates),
        milestones=[
            DefinitionMilestone(
                kind=m.kind,
                within=str(m.within),
                calendar=m.calendar,
                forecast_alert=m.forecast_alert,
            )
            for m in slot.milestones
        ],
        after=list(slot.after),
        for_each=ex.describe(slot.foreach_expr) if slot.foreach_expr is not None else None,
        magic_link=bool(slot.magic_link),
    )


def _move(move: Move) -> DefinitionMove:
    return DefinitionMove(
        name=move.name,
        label=move.label,
        to=move.to,
        by=_who(move.by),
        guard=ex.describe(move.guard) if move.guard is not None else None,
        fields=_fields(move.fields),
    )


def _state(state: State, lane: int) -> DefinitionState:
    kind = StateKind.INITIAL if state.initial else StateKind.WORK
    if state.terminal:
        kind = StateKind.TERMINAL
    return DefinitionState(
        name=state.name,
        label=state.label,
        description=state.description,
        kind=kind,
        lane=lane,
        pausing=state.pausing,
        slots=[_slot(s) for s in state.slots],
        moves=[_move(m) for m in state.moves],
        routes=[
            f"{r.to}: when {ex.describe(r.when)}" if r.when is not None else f"{r.to}: otherwise"
            for r in state.routes
        ],
    )


def version_of(definition: Definition) -> WorkflowVersion:
    """The typed reading of one definition, with its ``taskflow show`` document."""
    return relay.copied(
        WorkflowVersion,
        definition,
        initial_state=definition.initial_state.name if definition.states else None,
        lanes=[s.name for s in definition.states],
        states=[_state(s, i) for i, s in enumerate(definition.states)],
        document=cast(JSON, {**definition.to_document(), "digest": definition.digest}),
    )


@strawberry.type
class DefinitionQueries:
    @strawberry.field(
        description="Every loaded workflow definition (any signed-in caller: definitions "
        "hold no subject data), by name."
    )
    async def workflows(
        self,
        info: Info,
        name: Annotated[
            str | None, strawberry.argument(description="Only the workflow of this name.")
        ] = None,
    ) -> list[Workflow]:
        await caller(info)
        catalog = info.context.services.catalog
        found: dict[str, list[WorkflowVersion]] = {}
        for definition in catalog:
            if name is None or definition.name == name:
                found.setdefault(definition.name, []).append(version_of(definition))
        return [
            Workflow(
                name=n,
                latest=max(versions, key=lambda v: v.version),
                versions=sorted(versions, key=lambda v: v.version),
            )
            for n, versions in sorted(found.items())
        ]
