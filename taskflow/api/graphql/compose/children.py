"""``Run.children`` and ``Run.parent``: a run's child runs by label, and its parent run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common.context import Info, caller, checked
from taskflow.api.graphql.common.enums import ChildStatus
from taskflow.service.compose import reading

if TYPE_CHECKING:
    from taskflow.api.graphql.runs.types import RunType


async def _loaded(info: Info, run_id: str | None) -> Any:
    """The run ``run_id`` through the request's loader (None when none, or unreadable)."""
    if run_id is None:
        return None
    return await (await info.context.run_loader(info)).load(run_id)


@strawberry.type(name="RunChild", description="A child run its parent started under a label.")
class RunChild:
    label: str = strawberry.field(description="The label the parent's definition gives it.")
    workflow: str = strawberry.field(description="The child's workflow.")
    awaited: bool = strawberry.field(
        description="True: the parent waits for it; false: started bare (fire and forget)."
    )
    status: ChildStatus = strawberry.field(description="Where it stands for its parent.")
    state: str = strawberry.field(description="The parent's state that started it.")
    outcome: JSON | None = strawberry.field(
        description='How it ended, as the parent reads it (child("<label>")): state, '
        "status, failure (a kind, or null), reason, result; null until it ended."
    )
    child_id: strawberry.Private[str | None]

    @strawberry.field(
        description="The child run; null until it started, or when you may not read it "
        "(powers are per workflow)."
    )
    async def run(
        self, info: Info
    ) -> Annotated[RunType, strawberry.lazy("taskflow.api.graphql.runs.types")] | None:
        found: RunType | None = await _loaded(info, self.child_id)
        return found

    @classmethod
    def of(cls, row: reading.ChildRow) -> RunChild:
        return cls(
            label=row.label,
            workflow=row.workflow,
            awaited=row.awaited,
            status=ChildStatus(row.status),
            state=row.state,
            outcome=cast(JSON, row.outcome),
            child_id=row.child,
        )


@strawberry.type(
    name="Compensation",
    description="A saga step's compensation: the run that undoes a step that completed "
    "when its scope did not finish (docs/composition.md, Sagas).",
)
class Compensation:
    step: str = strawberry.field(description="The label of the step it undoes.")
    compensation: str = strawberry.field(description="The compensating workflow.")
    status: ChildStatus = strawberry.field(
        description="Where it stands: STARTING (to start), LIVE (running), SETTLED (done: "
        "see outcome)."
    )
    attempts: int = strawberry.field(
        description="Which attempt this is: a compensation that fails is started again, up "
        "to the step's compensation_attempts; each attempt is an entry of its own."
    )
    outcome: JSON | None = strawberry.field(
        description="How it ended: state, status, failure (a kind, or null: it undid the "
        "step), reason; null until it ended."
    )
    child_id: strawberry.Private[str | None]

    @strawberry.field(description="The compensating run; null until it started.")
    async def run(
        self, info: Info
    ) -> Annotated[RunType, strawberry.lazy("taskflow.api.graphql.runs.types")] | None:
        found: RunType | None = await _loaded(info, self.child_id)
        return found

    @classmethod
    def of(cls, row: reading.ChildRow) -> Compensation:
        return cls(
            step=row.label,
            compensation=row.workflow,
            status=ChildStatus(row.status),
            attempts=reading.attempt(row),
            outcome=cast(JSON, row.outcome),
            child_id=row.child,
        )


async def children_of_run(info: Info, run_id: str) -> list[RunChild]:
    """``Run.children``: the run's children (its saga steps' compensations aside), oldest
    first."""
    found = await reading.children_of(
        info.context.services, await caller(info), run_id, await checked(info)
    )
    return [RunChild.of(r) for r in found if not reading.is_compensation(r)]


async def compensations_of_run(info: Info, run_id: str) -> list[Compensation]:
    """``Run.compensations``: its saga's compensations, in the order they were started."""
    found = await reading.children_of(
        info.context.services, await caller(info), run_id, await checked(info)
    )
    return [Compensation.of(r) for r in found if reading.is_compensation(r)]


async def parent_of_run(info: Info, run_id: str) -> Any:
    """``Run.parent``: the run that started this one as a child (null when none, or when you
    may not read it)."""
    found = await reading.parent_of(
        info.context.services, await caller(info), run_id, await checked(info)
    )
    if found is None:
        return None
    return await (await info.context.run_loader(info)).load(found.parent)
