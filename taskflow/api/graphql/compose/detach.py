"""``detachChild``: an operator cuts a running child run loose from its parent."""

from __future__ import annotations

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
from taskflow.service.compose import detach


@strawberry.input(description="Cut a running child run loose from its parent.")
class DetachChildInput(OnRun):
    reason: str = strawberry.field(description="Why, for both runs' timelines (required).")
    idempotency_key: str | None = relay.idempotency_key_field()


DetachChildPayload = Annotated[
    RunSuccess | Refusals,
    strawberry.union("DetachChildPayload", description="Result of detachChild."),
]


@strawberry.type
class ComposeMutations:
    @keyed.mutation(DetachChildPayload, run_success, argument=relay.WHAT)
    @on_run
    async def detach_child(
        self, info: Info, me: Principal, input: DetachChildInput, run_id: str
    ) -> Viewed:
        """Cut the LIVE child run runId loose from its parent: it runs on, its end resumes no
        one and its parent's cancel no longer reaches it; a parent waiting for it stays where
        it is (admins, and leads and managers granted the parent's workflow)."""
        return await detach.detach_child(
            info.context.services, me, run_id=run_id, reason=input.reason
        )
