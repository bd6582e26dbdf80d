"""Teams' own calendars (table ``team_calendar``, walled by workspace): the calendar chain's
``team`` link (docs/calendars.md, "The calendar chain"). A team is an audience key
(``role:finance``, ``group:emea``); a team without a row has no calendar of its own."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql

#: The statements of ``clocks/team_calendars.sql``.
SQL = sql.statements("clocks/team_calendars")

#: The table (its ``workspace`` column, unique key and wall come with the workspace schema).
TABLE = (
    "team_calendar",
    "CREATE TABLE team_calendar ("
    " team text NOT NULL,"
    " calendar text NOT NULL,"
    " set_at timestamptz NOT NULL,"
    " set_by text NOT NULL)",
)
#: One calendar per team in a workspace (created after the workspace column).
INDEX = (
    "team_calendar_team",
    "CREATE UNIQUE INDEX team_calendar_team ON team_calendar (workspace, team)",
)


@dataclass(frozen=True)
class TeamCalendar:
    """A team's own calendar, and who set it when."""

    team: str
    calendar: str
    set_at: datetime
    set_by: str


@dataclass(frozen=True)
class LiveSlot:
    """A live slot open to a team: what moving its clocks needs to find it."""

    slot: str
    run: str
    workflow: str
    #: The definition version its run is on (what the chain is read from).
    version: int
    state: str
    name: str


async def set_calendar(
    conn: db.Connection, team: str, calendar: str | None, now: datetime, actor: str
) -> None:
    """Give ``team`` its own ``calendar`` (None: clear it)."""
    if calendar is None:
        await conn.execute(SQL["clear"], team)
    else:
        await conn.execute(SQL["set"], team, calendar, now, actor)


async def of_teams(conn: db.Connection, teams: Iterable[str]) -> Mapping[str, str]:
    """The calendars of these teams that have one, by team (one read)."""
    keys = sorted(set(teams))
    if not keys:
        return {}
    rows = await conn.fetch(SQL["of_teams"], keys)
    return {r["team"]: r["calendar"] for r in rows}


async def listed(conn: db.Connection) -> list[TeamCalendar]:
    """Every team with a calendar of its own, by team."""
    return [
        TeamCalendar(r["team"], r["calendar"], r["set_at"], r["set_by"])
        for r in await conn.fetch(SQL["listed"])
    ]


async def live_slots(conn: db.Connection, team: str, live: Collection[str]) -> list[LiveSlot]:
    """The live slots open to ``team`` (statuses ``live``), ordered by run."""
    rows = await conn.fetch(SQL["live_slots"], team, sorted(live))
    return [
        LiveSlot(r["slot"], r["run"], r["workflow"], r["version"], r["state"], r["name"])
        for r in rows
    ]
