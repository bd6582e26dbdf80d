"""Teams' own calendars (``setTeamCalendar``, ``taskflow teams calendar``): the calendar
chain's ``team`` link (docs/calendars.md, "The calendar chain"). Setting or clearing one
moves the running clocks of the live slots open to the team whose chain asks the team, under
each milestone's recompute policy, as a holder change does; admins only."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from taskflow import errors
from taskflow.core.access import principals as core
from taskflow.core.clocks import chain
from taskflow.core.runs.statuses import LIVE
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.store.clocks import team_calendars as rows

#: Teams are the audience keys reports group by: roles and groups.
TEAM_PREFIXES = ("role:", "group:")


@dataclass(frozen=True)
class TeamCalendarSet:
    """What ``setTeamCalendar`` did: the team's calendar now (None: none of its own) and how
    many slots' clocks moved onto it."""

    team: str
    calendar: str | None
    moved: int


def check_team(team: str) -> str:
    """The team key, checked: ``role:<name>`` or ``group:<name>``."""
    if not team.startswith(TEAM_PREFIXES) or not core.TEAM_PATTERN.fullmatch(team):
        raise errors.ValidationError(
            f"team {team!r} is not a team key; write role:<name> or group:<name> "
            "(the audience keys slots are open to).",
            field="team",
        )
    return team


@retry.retried("set a team's calendar")
async def set_team_calendar(
    services: Services, actor: core.Principal, team: str, calendar: str | None
) -> TeamCalendarSet:
    """Give ``team`` its own ``calendar`` (None: clear it) and move the running clocks of the
    live slots open to it whose chain asks the team, in one transaction."""
    access.require_admin(actor, "set a team's calendar")
    check_team(team)
    if calendar is not None and calendar not in services.calendars:
        raise errors.ValidationError(
            f"there is no calendar {calendar!r}; name one of "
            f"{', '.join(sorted(services.calendars.names())) or 'the calendars/ files'}.",
            field="calendar",
        )
    now = services.clock.now()
    moved = 0
    async with services.db.transaction() as conn:
        await rows.set_calendar(conn, team, calendar, now, actor.id)
        live = await rows.live_slots(conn, team, LIVE)
        asking = [s for s in live if _asks_team(services, s)]
        for run_id, slots in itertools.groupby(asking, key=lambda s: s.run):
            for slot in slots:  # the run's lock first, then its slots' rows
                moved += await deadlines.rechain_one(
                    services, conn, run_id, slot.slot, now, actor.id
                )
    return TeamCalendarSet(team, calendar, moved)


def _asks_team(services: Services, slot: rows.LiveSlot) -> bool:
    definition = services.catalog.get(slot.workflow, slot.version)
    return chain.asks_team(definition.slot(slot.state, slot.name).milestones)


async def listed(services: Services, actor: core.Principal) -> list[rows.TeamCalendar]:
    """Every team with a calendar of its own (admins only)."""
    access.require_admin(actor, "read teams' calendars")
    async with services.db.connection() as conn:
        return await rows.listed(conn)
