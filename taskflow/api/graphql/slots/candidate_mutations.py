"""``addCandidate``: let one more principal or role take a live slot."""

from __future__ import annotations

from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.targets import OnSlot
from taskflow.api.graphql.slots.work_answers import Refusals, SlotSuccess, on_slot, slot_success
from taskflow.core.access.principals import Principal
from taskflow.core.runs.model import SlotView
from taskflow.service.access import access
from taskflow.service.slots import candidates

AddCandidatePayload = Annotated[
    SlotSuccess | r.AlreadyCandidate | Refusals,
    strawberry.union("AddCandidatePayload", description="Result of addCandidate."),
]


@strawberry.input(description="Add a candidate to a live slot: a principal or a role.")
class AddCandidateInput(OnSlot):
    principal: str | None = strawberry.field(
        default=None, description="The login of the principal to add (or give role)."
    )
    role: str | None = strawberry.field(
        default=None, description="The role to add, e.g. finance-lead (or give principal)."
    )
    reason: str = strawberry.field(description="Why, for the timeline (1 to 2000 characters).")
    expected_version: int | None = strawberry.field(default=None, description="Guard, as in claim.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type
class CandidateMutations:
    @keyed.mutation(AddCandidatePayload, slot_success)
    @on_slot
    async def add_candidate(
        self,
        info: Info,
        me: Principal,
        input: AddCandidateInput,
        slot_id: str,
        request: access.RequestAccess,
    ) -> SlotView:
        """Let one more principal or role take a live slot, keeping its rule's exclusions
        (its delegates, leads and managers granted the slot, admins)."""
        return await candidates.add_candidate(
            info.context.services,
            me,
            slot_id,
            principal=input.principal,
            role=input.role,
            reason=input.reason,
            expected_version=input.expected_version,
        )
