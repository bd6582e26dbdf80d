"""The Slot object type of the work API: a human task, its subject and its payload fields.

Built from rows the service already loaded (an inbox row carries its subject and
run state), so list pages resolve without further queries; ``Slot.run`` goes
through the per-request run loader the context carries (``runs/types.py`` makes it and
imports this module, never the other way round).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.enums import SlotStatus
from taskflow.api.graphql.common.workspace_type import Held
from taskflow.core.clocks import expiry
from taskflow.core.definition import owning
from taskflow.core.runs.model import SlotView

if TYPE_CHECKING:
    from taskflow.api.graphql.clocks.sla import Clock
    from taskflow.api.graphql.links.links import MagicLinkType
    from taskflow.api.graphql.reports.breach_risk import BreachRisk
    from taskflow.api.graphql.runs.types import RunType

SLOT = "Slot"
#: No workflow owns anything (outside a request).
NO_OWNERS: Mapping[str, Any] = MappingProxyType({})


#: The workflow owning each subject type (``Catalog.owners``), set with each request's
#: GraphQL context (``api/app.py``): a Subject built with a run of its owner shows the run's
#: state under the owned field. A context variable, so the attributes stay a plain field
#: (read by the executor without a resolver: ``common/plain_fields.py``).
OWNERS: ContextVar[Mapping[str, Any]] = ContextVar("taskflow_subject_owners", default=NO_OWNERS)
#: ``Slot.outcome`` of each ended status.
OUTCOMES = {
    SlotStatus.SATISFIED: "completed",
    SlotStatus.EXPIRED: "expired",
    SlotStatus.CANCELLED: "cancelled",
}


@strawberry.type(description="The tracked entity, as the application sent it.")
class Subject(Held):
    type: str = strawberry.field(description="Its type, e.g. expense.")
    external_id: str = strawberry.field(description="The application's id for it.")
    attributes: JSON = strawberry.field(
        description="Its data, as last sent. Read on a run (or slot) of the workflow that owns "
        "the subject's type, it also holds that run's state under the owned field (e.g. "
        "status): read-only, updateSubject refuses to write it (OwnedField)."
    )

    @classmethod
    def of(
        cls,
        type: str,
        external_id: str,
        attributes: Any,
        workflow: str | None = None,
        state: str | None = None,
    ) -> Subject:
        """The subject as read with a run of ``workflow`` in ``state`` (the owner's run shows
        its state under the owned field)."""
        owner = OWNERS.get().get(type)
        if owner is not None and owner.name == workflow:
            attributes = owning.projected(attributes, owner.owns, state)
        return cls(type=type, external_id=external_id, attributes=cast(JSON, attributes))


@strawberry.type(description="A field of the payload a slot's event carries (drives forms).")
class PayloadField:
    name: str = strawberry.field(description="The payload key.")
    type: str = strawberry.field(
        description="text, number, integer, boolean, date, choice, file, url."
    )
    required: bool = strawberry.field(description="Whether it must be given.")
    choices: list[str] | None = strawberry.field(description="The allowed values of a choice.")
    label: str | None = strawberry.field(description="A human label, when declared.")


def _fields(workflow: str, version: int, state: str, name: str, info: Info) -> list[PayloadField]:
    definition = info.context.services.catalog.for_reading(workflow, version)
    if definition is None or not definition.has_state(state):
        return []  # a version older than the registry, and no longer loaded: no form known
    slot = definition.slot(state, name)
    return [
        PayloadField(
            name=f.name,
            type=f.type,
            required=f.required,
            choices=list(f.choices) if f.choices else None,
            label=f.label,
        )
        for f in slot.fields
    ]


@strawberry.type(
    name="Slot", description="A human task: a wait for one event in one state of a run."
)
class SlotType(relay.Node, Held):
    name: str = strawberry.field(description="The slot's name in its state.")
    label: str = strawberry.field(description="What to do, in words, for this subject.")
    workflow: str = strawberry.field(description="The workflow of its run.")
    state: str = strawberry.field(description="The state the slot belongs to.")
    run_state: str = strawberry.field(description="The state its run is in now.")
    status: SlotStatus = strawberry.field(description="Where the slot stands.")
    event: str = strawberry.field(description="The event completing it.")
    holder: str | None = strawberry.field(description="Login of the principal holding it.")
    priority: int = strawberry.field(description="1 is the most urgent.")
    due_at: datetime | None = strawberry.field(description="Nearest SLA due instant, if any.")
    version: int = strawberry.field(description="Pass as expectedVersion to guard a move.")
    item: JSON | None = strawberry.field(description="Its foreach element, if any.")
    item_index: int | None = strawberry.field(description="Position of that element.")
    payload: JSON | None = strawberry.field(description="The deposited payload, once satisfied.")
    candidates: str = strawberry.field(description="Who may take it, in words.")
    subject: Subject = strawberry.field(description="The tracked entity.")
    opened_at: datetime | None = strawberry.field(description="When it opened.")
    claimed_at: datetime | None = strawberry.field(description="When its holder took it.")
    satisfied_at: datetime | None = strawberry.field(description="When it was completed.")
    satisfied_by: str | None = strawberry.field(description="Who completed it.")
    outcome: str | None = strawberry.field(
        description="How it closed: completed, expired or cancelled; null while it waits."
    )
    run_id: strawberry.Private[str]
    definition_version: strawberry.Private[int]

    @strawberry.field(description="The payload fields its event takes (build the form from these).")
    def fields(self, info: Info) -> list[PayloadField]:
        return _fields(self.workflow, self.definition_version, self.state, self.name, info)

    @strawberry.field(
        description="When it expires (its declared expiry: after a time from its opening, or "
        "a date of its subject); null when it never does. Still answered once it closed."
    )
    def expires_at(self, info: Info) -> datetime | None:
        services = info.context.services
        definition = services.catalog.for_reading(self.workflow, self.definition_version)
        if definition is None or not definition.has_state(self.state):
            return None
        try:
            return expiry.instant(
                definition,
                self.state,
                self.name,
                self.opened_at,
                cast(Any, self.subject.attributes),
                services.calendars,
            )
        except expiry.BadSubjectDate:
            return None  # the subject's date no longer parses: it does not expire

    @strawberry.field(description="Magic links minted for it, oldest first.")
    async def links(
        self, info: Info
    ) -> list[Annotated[MagicLinkType, strawberry.lazy("taskflow.api.graphql.links.links")]]:
        from taskflow.api.graphql.links import links

        return await links.links_of_slot(info, str(self.id))

    @strawberry.field(description="Its SLA milestone clocks (assigned, finished) as of now.")
    async def clocks(
        self, info: Info
    ) -> list[Annotated[Clock, strawberry.lazy("taskflow.api.graphql.clocks.sla")]]:
        from taskflow.api.graphql.clocks import sla

        return await sla.clocks_of_slot(info, relay.from_global_id(str(self.id))[1])

    @strawberry.field(
        description="How likely it is to breach its milestone, from the workflow's past slots, "
        "with the reason; null once it ended or when no clock counts (docs/forecast.md)."
    )
    async def breach_risk(
        self, info: Info
    ) -> Annotated[BreachRisk, strawberry.lazy("taskflow.api.graphql.reports.breach_risk")] | None:
        from taskflow.api.graphql.reports import breach_risk

        return await breach_risk.breach_risk_of_slot(info, relay.from_global_id(str(self.id))[1])

    @strawberry.field(
        description="The run it belongs to; null when you may not read that run (the same "
        "rule as run(id:))."
    )
    async def run(
        self, info: Info
    ) -> Annotated[RunType, strawberry.lazy("taskflow.api.graphql.runs.types")] | None:
        found: RunType | None = await (await info.context.run_loader(info)).load(self.run_id)
        return found

    @classmethod
    def of(
        cls,
        slot: SlotView,
        *,
        workflow: str,
        definition_version: int,
        run_state: str,
        subject: Subject,
        due_at: datetime | None = None,
    ) -> SlotType:
        return cls(
            id=relay.node_id(SLOT, slot.id),
            name=slot.name,
            label=slot.label,
            workflow=workflow,
            state=slot.state,
            run_state=run_state,
            status=SlotStatus(slot.status),
            event=slot.waits_for,
            holder=slot.holder,
            priority=slot.priority,
            due_at=due_at,
            version=slot.version,
            item=cast(JSON, slot.item),
            item_index=slot.item_index,
            payload=cast(JSON, dict(slot.payload)) if slot.payload is not None else None,
            candidates=str(slot.audience),
            subject=subject,
            opened_at=slot.opened_at,
            claimed_at=slot.claimed_at,
            satisfied_at=slot.satisfied_at,
            satisfied_by=slot.satisfied_by,
            outcome=OUTCOMES.get(SlotStatus(slot.status)),
            run_id=slot.run_id,
            definition_version=definition_version,
        )


def slot_from_row(row: Any) -> SlotType:
    """A Slot from an inbox/work row (slot, its run's state and subject)."""
    return SlotType.of(
        row.slot,
        workflow=row.workflow,
        definition_version=row.definition_version,
        run_state=row.run_state,
        subject=Subject.of(
            row.subject_type,
            row.subject_external_id,
            row.subject_attributes,
            row.workflow,
            row.run_state,
        ),
        due_at=row.due_at,
    )
