"""GraphQL of history: a run's visits (``Run.history``), its state at an instant
(``Run.stateAt``) and the runs per state at an instant (``stateCounts``); docs/history.md."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.history import visits
from taskflow.service.history import history


@strawberry.type(description="A stay of a run in one state.")
class StateVisit:
    state: str = strawberry.field(description="The state's name.")
    entered_at: datetime = strawberry.field(description="When the run entered it.")
    left_at: datetime | None = strawberry.field(
        description="When it left (or was cancelled); null while it stands."
    )
    via: str = strawberry.field(
        description="How it got there: start, route, move, timer, goto, step, undo, redirect."
    )
    actor: str | None = strawberry.field(description="Who made the change (null: the engine).")
    entry_id: strawberry.ID = strawberry.field(
        description="The timeline line that entered it (Run.timeline's id)."
    )
    undone_by: strawberry.ID | None = strawberry.field(
        description="Literal history only: the timeline line of the undo that rewound this "
        "visit (an undone undo: the redo's); null when it stands."
    )

    @classmethod
    def of(cls, v: visits.Visit) -> StateVisit:
        undone = strawberry.ID(str(v.undone_by)) if v.undone_by is not None else None
        return relay.copied(cls, v, entry_id=strawberry.ID(str(v.line)), undone_by=undone)


@strawberry.type(description="How many runs of a workflow stood in one state at an instant.")
class StateCount:
    state: str = strawberry.field(description="The state's name.")
    runs: int = strawberry.field(description="Runs there at that instant (after undos).")


@strawberry.type(description="The runs of a workflow per state at one instant.")
class StateCounts:
    workflow: str = strawberry.field(description="The workflow counted.")
    at: datetime = strawberry.field(description="The instant asked about.")
    states: list[StateCount] = strawberry.field(
        description="Every state of its latest version (and any other a run stood in then)."
    )


async def history_of_run(info: Info, run_id: str, effective: bool) -> list[StateVisit]:
    """``Run.history``: the run was already found visible to the caller."""
    found = await history.run_visits(info.context.services, run_id, effective=effective)
    return [StateVisit.of(v) for v in found]


async def state_of_run_at(
    info: Info, run_id: str, at: datetime, effective: bool
) -> StateVisit | None:
    """``Run.stateAt``: the run was already found visible to the caller."""
    found = await history.run_state_at(info.context.services, run_id, at, effective=effective)
    return StateVisit.of(found) if found is not None else None


@strawberry.type
class HistoryQueries:
    @strawberry.field(
        description="How many runs of a workflow stood in each state at an instant, after undos "
        "(docs/history.md): leads and managers of the whole workflow and admins (others get "
        "FORBIDDEN); an instant before the runs kept is refused with OUTSIDE_RETENTION."
    )
    async def state_counts(
        self,
        info: Info,
        workflow: Annotated[str, strawberry.argument(description="The workflow's name.")],
        at: Annotated[datetime, strawberry.argument(description="The instant (up to now).")],
    ) -> StateCounts:
        me = await caller(info)
        found = await history.state_counts(info.context.services, me, workflow, at)
        return StateCounts(
            workflow=workflow,
            at=at,
            states=[StateCount(state=c.state, runs=c.runs) for c in found],
        )
