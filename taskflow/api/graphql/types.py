"""The object types of the work API: Subject, Slot, Run, timeline entries, moves.

Types are built from rows the service already loaded (an inbox row carries its
subject and run state), so list pages resolve without further queries; the
few fields that need more (``Slot.run``) go through a per-request DataLoader.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.dataloader import DataLoader
from strawberry.scalars import JSON

from taskflow.api.graphql import relay
from taskflow.api.graphql.context import Info, caller, checked
from taskflow.core.runs.model import SlotView
from taskflow.service import views

if TYPE_CHECKING:
    from taskflow.api.graphql.links import MagicLinkType
    from taskflow.api.graphql.reports import RunLeadTime
    from taskflow.api.graphql.sla import Clock
    from taskflow.api.graphql.steps import Step
    from taskflow.api.graphql.timers import Timer

RUN, SLOT = "Run", "Slot"


@strawberry.enum(description="Where a slot stands.")
class SlotStatus(Enum):
    PENDING = strawberry.enum_value("pending", description="Waits for sibling slots (after).")
    OPEN = strawberry.enum_value("open", description="Anyone among its candidates may take it.")
    CLAIMED = strawberry.enum_value("claimed", description="Held by one principal.")
    SATISFIED = strawberry.enum_value("satisfied", description="Its event was deposited.")
    CANCELLED = strawberry.enum_value("cancelled", description="The run left the state first.")


@strawberry.enum(description="Where a run stands.")
class RunStatus(Enum):
    ACTIVE = strawberry.enum_value("active", description="Moving through its states.")
    COMPLETED = strawberry.enum_value("completed", description="Reached a terminal state.")
    CANCELLED = strawberry.enum_value("cancelled", description="Cancelled by someone.")


@strawberry.type(description="The tracked entity, as the application sent it.")
class Subject:
    type: str = strawberry.field(description="Its type, e.g. expense.")
    external_id: str = strawberry.field(description="The application's id for it.")
    attributes: JSON = strawberry.field(description="Its data, as last sent.")


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
    definition = info.context.services.catalog.get(workflow, version)
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
class SlotType(relay.Node):
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
    run_id: strawberry.Private[str]
    definition_version: strawberry.Private[int]

    @strawberry.field(description="The payload fields its event takes (build the form from these).")
    def fields(self, info: Info) -> list[PayloadField]:
        return _fields(self.workflow, self.definition_version, self.state, self.name, info)

    @strawberry.field(description="Magic links minted for it, oldest first.")
    async def links(
        self, info: Info
    ) -> list[Annotated[MagicLinkType, strawberry.lazy("taskflow.api.graphql.links")]]:
        from taskflow.api.graphql import links

        return await links.links_of_slot(info, str(self.id))

    @strawberry.field(description="Its SLA milestone clocks (assigned, finished) as of now.")
    async def clocks(
        self, info: Info
    ) -> list[Annotated[Clock, strawberry.lazy("taskflow.api.graphql.sla")]]:
        from taskflow.api.graphql import sla

        return await sla.clocks_of_slot(info, relay.from_global_id(str(self.id))[1])

    @strawberry.field(
        description="The run it belongs to; null when you may not read that run (the same "
        "rule as run(id:))."
    )
    async def run(
        self, info: Info
    ) -> Annotated[RunType, strawberry.lazy("taskflow.api.graphql.types")] | None:
        found: RunType | None = await (await run_loader(info)).load(self.run_id)
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
            id=strawberry.ID(relay.to_global_id(SLOT, slot.id)),
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
        subject=Subject(
            type=row.subject_type,
            external_id=row.subject_external_id,
            attributes=cast(JSON, row.subject_attributes),
        ),
        due_at=row.due_at,
    )


@strawberry.type(description="One item of a checklist: a named precondition and whether it holds.")
class CheckItem:
    name: str = strawberry.field(description="What must be true.")
    holds: bool | None = strawberry.field(description="True, false, or null when unknown.")
    condition: str = strawberry.field(description="The condition, in words.")


@strawberry.type(description="A manual move of the run's current state, as it stands now.")
class MoveOption:
    name: str = strawberry.field(description="Pass as move to the move mutation.")
    label: str | None = strawberry.field(description="A human label, when declared.")
    to: str = strawberry.field(description="The state it leads to.")
    allowed: bool = strawberry.field(description="Whether the caller may make it now.")
    guard: bool | None = strawberry.field(description="The guard's value (null: unknown).")
    guard_text: str | None = strawberry.field(description="The guard, in words.")
    checklist: list[CheckItem] = strawberry.field(description="Its preconditions.")
    reasons: list[str] = strawberry.field(description="Why it is not allowed (empty if it is).")


def move_options(options: Sequence[views.MoveOption]) -> list[MoveOption]:
    return [
        MoveOption(
            name=o.name,
            label=o.label,
            to=o.to,
            allowed=o.allowed,
            guard=o.guard,
            guard_text=o.guard_text,
            checklist=[
                CheckItem(name=c.name, holds=c.holds, condition=c.condition) for c in o.checklist
            ],
            reasons=list(o.reasons),
        )
        for o in options
    ]


@strawberry.type(description="One line of a run's timeline: who did what, when, and why.")
class TimelineEntry:
    id: strawberry.ID = strawberry.field(
        description="Position on the timeline, its total order: a larger id was decided later "
        "(the list comes in this order; compare ids as integers)."
    )
    kind: str = strawberry.field(description="What happened, e.g. slot.claimed, refused.")
    actor: str | None = strawberry.field(description="Who did it (null: taskflow itself).")
    reason: str | None = strawberry.field(description="Why, in words.")
    details: JSON = strawberry.field(description="The facts of the happening.")
    at: datetime = strawberry.field(
        description="When: the one instant of the decision that wrote the line (every line of "
        "one decision has the same)."
    )
    slot_id: strawberry.ID | None = strawberry.field(description="Global id of the slot, if any.")


@strawberry.type(name="Run", description="One run of a workflow for one tracked entity.")
class RunType(relay.Node):
    workflow: str = strawberry.field(description="The workflow's name.")
    definition_version: int = strawberry.field(description="The definition version it runs on.")
    definition_digest: str = strawberry.field(description="Digest of that exact definition.")
    state: str = strawberry.field(description="The state it is in.")
    status: RunStatus = strawberry.field(description="Active, completed or cancelled.")
    subject: Subject = strawberry.field(description="The tracked entity.")
    correlation_key: str | None = strawberry.field(description="The key events may target.")
    started_at: datetime = strawberry.field(description="When it started.")
    state_entered_at: datetime = strawberry.field(description="When it entered its state.")
    ended_at: datetime | None = strawberry.field(description="When it ended, if it has.")
    version: int = strawberry.field(
        description="Goes up each time the run itself changes (its state or status): pass it "
        "as expectedVersion to move or cancelRun to refuse a change picked on a stale view."
    )
    local_id: strawberry.Private[str]

    @strawberry.field(description="Its slots in the current state (all states: allStates).")
    async def slots(
        self,
        info: Info,
        all_states: Annotated[
            bool, strawberry.argument(description="Include slots of states it has left.")
        ] = False,
    ) -> list[SlotType]:
        me = await caller(info)
        run, slots = await views.run_detail(
            info.context.services, me, self.local_id, await checked(info)
        )
        visit = run.view.visit
        return [
            SlotType.of(
                s,
                workflow=run.view.workflow,
                definition_version=run.view.definition_version,
                run_state=run.view.state,
                subject=self.subject,
            )
            for s in slots
            if all_states or s.visit == visit
        ]

    @strawberry.field(
        description="Wall-clock lead time, worked (a slot held) and waiting, in all and per state."
    )
    async def lead_time(
        self, info: Info
    ) -> Annotated[RunLeadTime, strawberry.lazy("taskflow.api.graphql.reports")]:
        from taskflow.api.graphql import reports

        return await reports.lead_time_of_run(info, self.local_id)

    @strawberry.field(
        description="Its timers (reminders, breaches, timeouts) with their state, attempts and "
        "last error, oldest first; null unless you are a lead, manager or admin."
    )
    async def timers(
        self, info: Info
    ) -> list[Annotated[Timer, strawberry.lazy("taskflow.api.graphql.timers")]] | None:
        from taskflow.api.graphql import timers

        return await timers.timers_of_run(info, self.local_id)

    @strawberry.field(
        description="Its automatic steps (actions, recurring work, timeouts' actions), newest "
        "first, each with its attempts, result and errors."
    )
    async def steps(
        self, info: Info
    ) -> list[Annotated[Step, strawberry.lazy("taskflow.api.graphql.steps")]]:
        from taskflow.api.graphql import steps

        return await steps.steps_of_run(info, self.local_id)

    @strawberry.field(description="The manual moves of its state, with guards and checklists.")
    async def moves(self, info: Info) -> list[MoveOption]:
        me = await caller(info)
        run, slots = await views.run_detail(
            info.context.services, me, self.local_id, await checked(info)
        )
        return move_options(views.moves_for(info.context.services, me, run, slots))

    @strawberry.field(description="Its state's preconditions, each with whether it holds now.")
    async def checklist(self, info: Info) -> list[CheckItem]:
        me = await caller(info)
        run, slots = await views.run_detail(
            info.context.services, me, self.local_id, await checked(info)
        )
        found = views.checklist_for(info.context.services, me, run, slots)
        return [CheckItem(name=c.name, holds=c.holds, condition=c.condition) for c in found]

    @strawberry.field(
        description="Its timeline, oldest first; null (with an INVALID_INPUT error on this "
        "field alone) when `after` is not a cursor it gave out."
    )
    async def timeline(
        self,
        info: Info,
        kinds: Annotated[
            list[str] | None, strawberry.argument(description="Only these kinds (e.g. refused).")
        ] = None,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 50,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
    ) -> relay.Connection[TimelineEntry] | None:
        me = await caller(info)
        after_id = relay.decode_typed(after, "bigint")[0] if after else 0
        found, total, has_next = await views.timeline(
            info.context.services,
            me,
            self.local_id,
            kinds=kinds,
            first=first,
            after_id=after_id,
            checked=await checked(info),
        )
        edges = [
            relay.Edge(
                cursor=relay.encode_cursor(str(t.id)),
                node=TimelineEntry(
                    id=strawberry.ID(str(t.id)),
                    kind=t.kind,
                    actor=t.actor,
                    reason=t.reason,
                    details=cast(JSON, t.details),
                    at=t.at,
                    slot_id=strawberry.ID(relay.to_global_id(SLOT, t.slot_id))
                    if t.slot_id
                    else None,
                ),
            )
            for t in found
        ]
        return relay.Connection(
            edges=edges,
            page_info=relay.PageInfo(
                has_next_page=has_next, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=total,
        )

    @classmethod
    def of(cls, run: Any) -> RunType:
        view = run.view
        return cls(
            id=strawberry.ID(relay.to_global_id(RUN, view.id)),
            workflow=view.workflow,
            definition_version=view.definition_version,
            definition_digest=run.definition_digest,
            state=view.state,
            status=RunStatus(view.status),
            subject=Subject(
                type=run.subject.type,
                external_id=run.subject.external_id,
                attributes=cast(JSON, run.subject.attributes),
            ),
            correlation_key=run.correlation_key,
            started_at=run.started_at,
            state_entered_at=view.state_entered_at,
            ended_at=view.ended_at,
            version=run.version,
            local_id=view.id,
        )


async def run_loader(info: Info) -> DataLoader[str, RunType | None]:
    """This request's loader of runs the caller may read (two queries per batch, cached
    with the access answers: a mutation starts both afresh)."""
    cache = await checked(info)
    name = f"readable_run:{id(cache)}"
    loaders = info.context.loaders
    if name not in loaders:

        async def load(keys: list[str]) -> list[RunType | None]:
            found = await cache.readable_runs(keys)
            return [RunType.of(found[k][0]) if k in found else None for k in keys]

        for stale in [k for k in loaders if k.startswith("readable_run:")]:
            del loaders[stale]  # an earlier mutation's loader holds runs as they were
        loaders[name] = DataLoader(load_fn=load)
    return loaders[name]
