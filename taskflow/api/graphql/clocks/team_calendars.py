"""GraphQL for teams' own calendars (the calendar chain's ``team`` link): the
``teamCalendars`` query and ``setTeamCalendar`` (admins only; docs/calendars.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.access.principals import Principal
from taskflow.service.clocks import team_calendars as service


@strawberry.type(description="A team's own calendar: milestones whose chain asks the team.")
class TeamCalendar:
    team: str = strawberry.field(description="The team: an audience key, role:x or group:x.")
    calendar: str = strawberry.field(description="The calendar its slots' clocks count on.")
    set_at: datetime = strawberry.field(description="When it was set.")
    set_by: str = strawberry.field(description="Who set it (a principal id).")


@strawberry.input(description="A team and the calendar it counts on (null: none of its own).")
class SetTeamCalendarInput:
    team: str = strawberry.field(description="The team: role:<name> or group:<name>.")
    calendar: str | None = strawberry.field(
        default=None,
        description="A loaded calendar's name; null clears the team's own calendar.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The team's calendar was stored, and its running clocks moved.")
class SetTeamCalendarSuccess:
    team: str = strawberry.field(description="The team.")
    calendar: str | None = strawberry.field(description="Its own calendar now; null: none.")
    moved_slots: int = strawberry.field(
        description="Live slots open to the team whose chain asks the team: their unmet clocks "
        "were moved under each milestone's recompute policy."
    )


SetTeamCalendarPayload = Annotated[
    SetTeamCalendarSuccess | relay.Common,
    strawberry.union("SetTeamCalendarPayload", description="Result of setTeamCalendar."),
]


async def _success(
    _: Info, __: Principal, found: keyed.Answer, ___: bool
) -> SetTeamCalendarSuccess:
    return SetTeamCalendarSuccess(
        team=found["team"], calendar=found["calendar"], moved_slots=found["moved"]
    )


@strawberry.type
class TeamCalendarQueries:
    @strawberry.field(description="Every team with a calendar of its own, by team (admins).")
    async def team_calendars(self, info: Info) -> list[TeamCalendar]:
        me = await caller(info)
        return [
            TeamCalendar(team=t.team, calendar=t.calendar, set_at=t.set_at, set_by=t.set_by)
            for t in await service.listed(info.context.services, me)
        ]


@strawberry.type
class TeamCalendarMutations:
    @keyed.mutation(SetTeamCalendarPayload, _success, argument="The team and its calendar.")
    async def set_team_calendar(
        self, info: Info, me: Principal, input: SetTeamCalendarInput
    ) -> keyed.Answer:
        """Give a team its own calendar, or clear it (admins): slots whose milestone chain
        asks the team count on it, and their running clocks move onto it at once under each
        milestone's recompute policy, as when the holder changes."""
        done = await service.set_team_calendar(
            info.context.services, me, input.team, input.calendar
        )
        return {"team": done.team, "calendar": done.calendar, "moved": done.moved}


__all__ = ["TeamCalendarMutations", "TeamCalendarQueries"]
