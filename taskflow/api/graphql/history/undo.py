"""GraphQL of undo: the ``undo`` mutation, ``Run.undoable`` and ``Run.undoTarget``, and the
refusals an undo answers with (docs/history.md, "Undo")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.refused import Refusal, refusal
from taskflow.api.graphql.common.targets import OnRun
from taskflow.api.graphql.slots.work_answers import RunSuccess, Viewed, on_run, run_success
from taskflow.core.access.principals import Principal
from taskflow.core.history import undo as rule
from taskflow.service.history import undoing


@refusal(rule.NotUndoable)
class NotUndoable(Refusal):
    """The run's latest state change may not be undone."""

    reason: str | None = strawberry.field(description="Why, in words.")


@refusal(rule.NoHistory)
class NoHistory(Refusal):
    """The run has not changed state since it started."""


@refusal(rule.UndoWindowExpired)
class UndoWindowExpired(Refusal):
    """The window to undo the change has passed."""

    until: datetime | None = strawberry.field(description="Until when it could be undone.")


@refusal(rule.NotSameActor)
class NotSameActor(Refusal):
    """Only the person who made the change may undo it."""

    actor: str | None = strawberry.field(description="Who made the change.")


@strawberry.input(description="Undo a run's latest state change (undoing an undo redoes it).")
class UndoInput(OnRun):
    reason: str = strawberry.field(description="Why, for the timeline (required).")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version as you saw it (Run.version): refused with StaleVersion "
        "if the run changed since. Omit to undo whatever its latest change is now.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


UndoPayload = Annotated[
    RunSuccess
    | NotUndoable
    | NoHistory
    | UndoWindowExpired
    | NotSameActor
    | r.StaleVersion
    | r.RunNotActive
    | relay.Common,
    strawberry.union("UndoPayload", description="Result of undo."),
]


@strawberry.type
class UndoMutations:
    @keyed.mutation(UndoPayload, run_success, argument=relay.WHAT)
    @on_run
    async def undo(self, info: Info, me: Principal, input: UndoInput, run_id: str) -> Viewed:
        """Rewind the run to the state it stood in before its latest state change, reopening
        that state's slots as they were; undoing an undo redoes it. Only a change its
        definition marks undoable, within its window; side effects are not undone."""
        return await undoing.undo(
            info.context.services,
            me,
            run_id=run_id,
            reason=input.reason,
            expected_version=input.expected_version,
        )
