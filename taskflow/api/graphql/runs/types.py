"""The Run object type of the work API, with its timeline entries, moves and checklists.

Types are built from rows the service already loaded, so list pages resolve
without further queries; ``Slot.run`` goes through :func:`run_loader`, a
per-request DataLoader the app hands the context (the Slot type does not import this
module, which builds on it). The Slot type and the subject live in
:mod:`taskflow.api.graphql.slots.slot_type` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.dataloader import DataLoader
from strawberry.scalars import JSON

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller, checked
from taskflow.api.graphql.common.enums import RunStatus, SlotStatus
from taskflow.api.graphql.common.workspace_type import Held
from taskflow.api.graphql.slots.slot_type import (
    SLOT,
    PayloadField,
    SlotType,
    Subject,
    slot_from_row,
)
from taskflow.core.access.principals import Principal
from taskflow.core.definition import runtime
from taskflow.core.runs.model import SlotView
from taskflow.service.slots import views

if TYPE_CHECKING:
    from taskflow.api.graphql.clocks.run_deadline import RunDeadline
    from taskflow.api.graphql.clocks.timers import Timer
    from taskflow.api.graphql.compose.children import Compensation, RunChild
    from taskflow.api.graphql.history.history import StateVisit
    from taskflow.api.graphql.history.undo_target import UndoTarget
    from taskflow.api.graphql.reports.reports import RunLeadTime
    from taskflow.api.graphql.steps.steps import Step

__all__ = [
    "RUN",
    "SLOT",
    "CheckItem",
    "MoveOption",
    "PayloadField",
    "RunStatus",
    "RunType",
    "SlotStatus",
    "SlotType",
    "Subject",
    "TimelineEntry",
    "move_options",
    "run_loader",
    "slot_from_row",
]

RUN = "Run"


@strawberry.type(description="One item of a checklist: a named precondition and whether it holds.")
class CheckItem:
    name: str = strawberry.field(description="What must be true.")
    holds: bool | None = strawberry.field(description="True, false, or null when unknown.")
    condition: str = strawberry.field(description="The condition, in words.")

    @classmethod
    def of(cls, item: runtime.CheckItem) -> CheckItem:
        return relay.copied(cls, item)


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
        relay.copied(
            MoveOption, o, checklist=[CheckItem.of(c) for c in o.checklist], reasons=list(o.reasons)
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
class RunType(relay.Node, Held):
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

    async def _detail(self, info: Info) -> tuple[Principal, Any, list[SlotView]]:
        """The caller, this run as they may read it, and its slots."""
        me = await caller(info)
        run, slots = await views.run_detail(
            info.context.services, me, self.local_id, await checked(info)
        )
        return me, run, slots

    @strawberry.field(description="Its slots in the current state (all states: allStates).")
    async def slots(
        self,
        info: Info,
        all_states: Annotated[
            bool, strawberry.argument(description="Include slots of states it has left.")
        ] = False,
    ) -> list[SlotType]:
        _, run, slots = await self._detail(info)
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
    ) -> Annotated[RunLeadTime, strawberry.lazy("taskflow.api.graphql.reports.reports")]:
        from taskflow.api.graphql.reports import reports

        return await reports.lead_time_of_run(info, self.local_id)

    @strawberry.field(
        description="The state it stood in at an instant (null: not started yet, or cancelled "
        "by then); effective (the default) reads its history after undos (docs/history.md)."
    )
    async def state_at(
        self,
        info: Info,
        at: Annotated[datetime, strawberry.argument(description="The instant (up to now).")],
        effective: Annotated[
            bool, strawberry.argument(description="After undos (false: as it happened).")
        ] = True,
    ) -> Annotated[StateVisit, strawberry.lazy("taskflow.api.graphql.history.history")] | None:
        from taskflow.api.graphql.history import history

        return await history.state_of_run_at(info, self.local_id, at, effective)

    @strawberry.field(
        description="The states it stood in, oldest first: literal (the default) is what "
        "happened, states rewound by undos included; effective is what stands after undos."
    )
    async def history(
        self,
        info: Info,
        effective: Annotated[
            bool, strawberry.argument(description="After undos (false: as it happened).")
        ] = False,
    ) -> list[Annotated[StateVisit, strawberry.lazy("taskflow.api.graphql.history.history")]]:
        from taskflow.api.graphql.history import history

        return await history.history_of_run(info, self.local_id, effective)

    @strawberry.field(
        description="Its deadline across states (the workflow's `deadline`): due instant, "
        "source, status and milestones; null when it has none."
    )
    async def deadline(
        self, info: Info
    ) -> Annotated[RunDeadline, strawberry.lazy("taskflow.api.graphql.clocks.run_deadline")] | None:
        from taskflow.api.graphql.clocks import run_deadline

        _, run, _ = await self._detail(info)
        return await run_deadline.deadline_of_run(info, run.view)

    @strawberry.field(
        description="What undo would do now for you: the state it returns to and the line it "
        "rewinds (null: the latest change may not be undone by you; docs/history.md)."
    )
    async def undo_target(
        self, info: Info
    ) -> Annotated[UndoTarget, strawberry.lazy("taskflow.api.graphql.history.undo_target")] | None:
        from taskflow.api.graphql.history import undo_target

        return await undo_target.target_of_run(info, self.local_id)

    @strawberry.field(description="Whether you may undo its latest state change now (undo).")
    async def undoable(self, info: Info) -> bool:
        from taskflow.api.graphql.history import undo_target

        return await undo_target.target_of_run(info, self.local_id) is not None

    @strawberry.field(
        description="Its timers (reminders, breaches, timeouts) with their state, attempts and "
        "last error, oldest first; null unless you are a lead, manager or admin."
    )
    async def timers(
        self, info: Info
    ) -> list[Annotated[Timer, strawberry.lazy("taskflow.api.graphql.clocks.timers")]] | None:
        from taskflow.api.graphql.clocks import timers

        return await timers.timers_of_run(info, self.local_id)

    @strawberry.field(
        description="Its automatic steps (actions, recurring work, timeouts' actions), newest "
        "first, each with its attempts, result and errors."
    )
    async def steps(
        self, info: Info
    ) -> list[Annotated[Step, strawberry.lazy("taskflow.api.graphql.steps.steps")]]:
        from taskflow.api.graphql.steps import steps

        return await steps.steps_of_run(info, self.local_id)

    @strawberry.field(
        description="The child runs it started, by label, oldest first (docs/composition.md)."
    )
    async def children(
        self, info: Info
    ) -> list[Annotated[RunChild, strawberry.lazy("taskflow.api.graphql.compose.children")]]:
        from taskflow.api.graphql.compose import children

        return await children.children_of_run(info, self.local_id)

    @strawberry.field(
        description="Its saga's compensations: one per completed step undone when the "
        "scope did not finish, in the order they were started (docs/composition.md, Sagas)."
    )
    async def compensations(
        self, info: Info
    ) -> list[Annotated[Compensation, strawberry.lazy("taskflow.api.graphql.compose.children")]]:
        from taskflow.api.graphql.compose import children

        return await children.compensations_of_run(info, self.local_id)

    @strawberry.field(
        description="The run that started this one as a child; null when none started it, "
        "or when you may not read that run."
    )
    async def parent(self, info: Info) -> RunType | None:
        from taskflow.api.graphql.compose import children

        found: RunType | None = await children.parent_of_run(info, self.local_id)
        return found

    @strawberry.field(description="The manual moves of its state, with guards and checklists.")
    async def moves(self, info: Info) -> list[MoveOption]:
        me, run, slots = await self._detail(info)
        return move_options(views.moves_for(info.context.services, me, run, slots))

    @strawberry.field(description="Its state's preconditions, each with whether it holds now.")
    async def checklist(self, info: Info) -> list[CheckItem]:
        me, run, slots = await self._detail(info)
        found = views.checklist_for(info.context.services, me, run, slots)
        return [CheckItem.of(c) for c in found]

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
                    slot_id=relay.node_id(SLOT, t.slot_id),
                ),
            )
            for t in found
        ]
        return relay.page(edges, has_next, total)

    @classmethod
    def of(cls, run: Any) -> RunType:
        view = run.view
        return relay.copied(
            cls,
            view,
            definition_digest=run.definition_digest,
            status=RunStatus(view.status),
            subject=Subject.of(
                run.subject.type,
                run.subject.external_id,
                run.subject.attributes,
                view.workflow,
                view.state,
            ),
            correlation_key=run.correlation_key,
            started_at=run.started_at,
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
