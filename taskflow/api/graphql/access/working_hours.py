"""GraphQL for a principal's working hours and leave: ``setWorkingHours``, ``addLeave``,
``removeLeave`` (the principal themself, or an admin for anyone)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.access import principals
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info
from taskflow.core.access.principals import Principal
from taskflow.service.access import working_hours as service


def _whose(me: Principal, principal_id: strawberry.ID | None) -> str:
    if principal_id is None:
        return me.id
    return relay.local_id(principal_id, principals.TYPE_NAME, "principalId")


_PRINCIPAL_ID = "Global id of the principal; left out: yourself. Admins only for others."


@strawberry.input(description="A principal's working hours: weekly windows, or a calendar.")
class SetWorkingHoursInput:
    principal_id: strawberry.ID | None = strawberry.field(default=None, description=_PRINCIPAL_ID)
    time_zone: str = strawberry.field(
        default="UTC", description="IANA time zone the windows are read in."
    )
    windows: JSON | None = strawberry.field(
        default=None,
        description='Weekly windows by day (mon..sun), e.g. {"mon": [["09:00", "17:00"]]}; '
        "give these or calendar.",
    )
    calendar: str | None = strawberry.field(
        default=None, description="A business calendar's name instead of windows."
    )
    clear: bool = strawberry.field(
        default=False, description="True: unset the working hours (no quiet hours of their own)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="The absence to remove, by its exact instants.")
class RemoveLeaveInput:
    principal_id: strawberry.ID | None = strawberry.field(default=None, description=_PRINCIPAL_ID)
    start: datetime = strawberry.field(name="from", description="When the leave starts.")
    end: datetime = strawberry.field(name="to", description="When it ends (exclusive).")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="One absence of a principal, [from, to).")
class AddLeaveInput(RemoveLeaveInput):
    note: str | None = strawberry.field(default=None, description="Why, in words (200 at most).")


@strawberry.type(description="The working hours were stored.")
class SetWorkingHoursSuccess(principals.PrincipalStored):
    pass


@strawberry.type(description="The leave was added (or was there already).")
class AddLeaveSuccess(principals.PrincipalStored):
    pass


@strawberry.type(description="The leave was removed.")
class RemoveLeaveSuccess(principals.PrincipalStored):
    pass


SetWorkingHoursPayload = Annotated[
    SetWorkingHoursSuccess | relay.Common,
    strawberry.union("SetWorkingHoursPayload", description="Result of setWorkingHours."),
]
AddLeavePayload = Annotated[
    AddLeaveSuccess | relay.Common,
    strawberry.union("AddLeavePayload", description="Result of addLeave."),
]
RemoveLeavePayload = Annotated[
    RemoveLeaveSuccess | relay.Common,
    strawberry.union("RemoveLeavePayload", description="Result of removeLeave."),
]


_set = keyed.built(SetWorkingHoursSuccess, principal=principals.principal_type)
_added = keyed.built(AddLeaveSuccess, principal=principals.principal_type)
_removed = keyed.built(RemoveLeaveSuccess, principal=principals.principal_type)


@strawberry.type
class WorkingHoursMutations:
    @keyed.mutation(SetWorkingHoursPayload, _set, argument="Whose working hours, and which.")
    async def set_working_hours(
        self, info: Info, me: Principal, input: SetWorkingHoursInput
    ) -> keyed.Answer:
        """Set a principal's working hours (yourself; admins for anyone): reminders to them
        wait outside these hours."""
        windows: Any = input.windows
        if windows is not None and not isinstance(windows, dict):
            windows = {"": windows}  # refused by the check, naming the shape to use
        principal = await service.set_working_hours(
            info.context.services,
            me,
            _whose(me, input.principal_id),
            time_zone=input.time_zone,
            windows=windows,
            calendar=input.calendar,
            clear=input.clear,
        )
        return {"principal": principal.id}

    @keyed.mutation(AddLeavePayload, _added, argument="Whose leave, from when to when.")
    async def add_leave(self, info: Info, me: Principal, input: AddLeaveInput) -> keyed.Answer:
        """Add leave to a principal (yourself; admins for anyone): reminders wait for its end,
        and assign refuses them meanwhile unless forced."""
        principal = await service.add_leave(
            info.context.services,
            me,
            _whose(me, input.principal_id),
            input.start,
            input.end,
            input.note,
        )
        return {"principal": principal.id}

    @keyed.mutation(RemoveLeavePayload, _removed, argument="Whose leave, by its instants.")
    async def remove_leave(
        self, info: Info, me: Principal, input: RemoveLeaveInput
    ) -> keyed.Answer:
        """Remove a principal's leave (yourself; admins for anyone)."""
        principal = await service.remove_leave(
            info.context.services, me, _whose(me, input.principal_id), input.start, input.end
        )
        return {"principal": principal.id}
