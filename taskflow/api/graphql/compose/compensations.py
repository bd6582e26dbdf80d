"""``resolveCompensation``: an operator redoes or clears a saga compensation that failed its
last attempt (the ``COMPENSATION_FAILED`` attention item)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.targets import OnRun
from taskflow.api.graphql.slots.work_answers import (
    Refusals,
    RunSuccess,
    Viewed,
    on_run,
    run_success,
)
from taskflow.core.access.principals import Principal
from taskflow.service.compose import compensations


@strawberry.enum(description="What an operator does with a compensation that failed.")
class CompensationResolution(Enum):
    REDO = strawberry.enum_value(
        compensations.REDO, description="Start it again: one more attempt, a run of its own."
    )
    CLEAR = strawberry.enum_value(
        compensations.CLEAR, description="The step was undone by hand: nothing more to start."
    )


@strawberry.input(description="Redo or clear a saga compensation that failed its last attempt.")
class ResolveCompensationInput(OnRun):
    step: str = strawberry.field(description="The saga step's label (Run.compensations.step).")
    action: CompensationResolution = strawberry.field(description="Redo it, or clear it.")
    reason: str = strawberry.field(description="Why, for the run's timeline (required).")
    idempotency_key: str | None = relay.idempotency_key_field()


ResolveCompensationPayload = Annotated[
    RunSuccess | Refusals,
    strawberry.union("ResolveCompensationPayload", description="Result of resolveCompensation."),
]


@strawberry.type
class CompensationMutations:
    @keyed.mutation(ResolveCompensationPayload, run_success, argument=relay.WHAT)
    @on_run
    async def resolve_compensation(
        self, info: Info, me: Principal, input: ResolveCompensationInput, run_id: str
    ) -> Viewed:
        """Resolve the COMPENSATION_FAILED item of saga step ``step`` of run runId: REDO
        starts the compensation again, CLEAR notes it was undone by hand; the attention item
        goes, the timeline says who and why (admins, and leads and managers granted the run's
        workflow). Nothing failed and unresolved there: NOT_FOUND."""
        return await compensations.resolve_compensation(
            info.context.services,
            me,
            run_id=run_id,
            step=input.step,
            action=(
                compensations.REDO
                if input.action is CompensationResolution.REDO
                else compensations.CLEAR
            ),
            reason=input.reason,
        )
