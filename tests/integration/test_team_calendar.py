"""The calendar chain's ``team`` link against PostgreSQL (docs/calendars.md, "The calendar
chain"): a slot opens on its team's own calendar, and setting or clearing that calendar moves
the team's running clocks under the recompute policy, as a holder change does; over HTTP the
mutation is admins' only and a bad team or calendar changes nothing.

The ``team-chained`` workflow (tests/integration/chain_workflows.py) asks ``("team",
"workflow")`` for a slot open to role:finance; the workflow's calendar is us-new-york. The
FrozenClock is moved, never slept on.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from taskflow import clock, errors
from taskflow.service.clocks import team_calendars, timers
from taskflow.service.common import container
from taskflow.service.slots import slots as slot_service
from tests.conftest import app_with, gql
from tests.integration.starting import app_starts, finished_clock, person, recomputed_line

pytestmark = pytest.mark.anyio

team_services, api, tokens = app_with("team_services", Path(__file__).parent / "chain_workflows.py")

TUESDAY_14 = datetime(2026, 12, 1, 14, tzinfo=UTC)  # New York 09:00, London 14:00


@pytest.fixture
def services(
    team_services: container.Services, frozen_clock: clock.FrozenClock
) -> container.Services:
    """The chained workflows' services, their clock at Tuesday 14:00 UTC."""
    frozen_clock.set(TUESDAY_14)
    return team_services


SET = """mutation($team: String!, $calendar: String) {
  setTeamCalendar(input: {team: $team, calendar: $calendar}) {
    __typename
    ... on SetTeamCalendarSuccess { team calendar movedSlots }
    ... on InvalidInput { field message }
    ... on NotAllowed { message } } }"""
CLOCKS = """{ inbox(first: 10) { edges { node { name
  clocks { milestone calendar calendarLink dueAt } } } } }"""


async def started(services: container.Services) -> str:
    run = await app_starts(services, "team-chained", f"T-{uuid.uuid4()}", {}, grant=True)
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run.id))
    return str(slot_id)


async def test_a_slot_opens_on_its_teams_calendar(services: container.Services) -> None:
    ada = await person(services, "ada")
    await team_calendars.set_team_calendar(services, ada, "role:finance", "uk-london")
    slot_id = await started(services)
    # Four London hours from 14:00 UTC: 3.5 h to 17:30, then Wednesday 09:00-09:30.
    assert await finished_clock(services, slot_id) == (
        "uk-london",
        datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
    )


async def test_setting_and_clearing_moves_running_clocks_keeping_the_time_spent(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    slot_id = await started(services)
    assert await finished_clock(services, slot_id) == (
        "us-new-york",
        datetime(2026, 12, 1, 18, tzinfo=UTC),
    )
    # An hour on New York time spent; from 15:00 the rest (3 h) counts on London's:
    # 2.5 h to 17:30, the last half hour Wednesday 09:00-09:30.
    frozen_clock.set(datetime(2026, 12, 1, 15, tzinfo=UTC))
    ada = await person(services, "ada")
    done = await team_calendars.set_team_calendar(services, ada, "role:finance", "uk-london")
    assert done.moved == 1
    assert await finished_clock(services, slot_id) == (
        "uk-london",
        datetime(2026, 12, 2, 9, 30, tzinfo=UTC),
    )
    line = await recomputed_line(services, slot_id)
    assert (line["details"]["old_calendar"], line["details"]["new_calendar"]) == (
        "us-new-york",
        "uk-london",
    )
    # Cleared at 16:00 (one more London hour spent): the last 2 h run on New York's again.
    frozen_clock.set(datetime(2026, 12, 1, 16, tzinfo=UTC))
    await team_calendars.set_team_calendar(services, ada, "role:finance", None)
    assert await finished_clock(services, slot_id) == (
        "us-new-york",
        datetime(2026, 12, 1, 18, tzinfo=UTC),
    )


async def test_a_slot_the_workers_timeout_opens_counts_on_its_teams_calendar(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    ada = await person(services, "ada")
    await team_calendars.set_team_calendar(services, ada, "role:finance", "uk-london")
    run = await app_starts(services, "team-later", "L-1", {}, grant=True)
    frozen_clock.set(datetime(2026, 12, 1, 15, tzinfo=UTC))
    assert await timers.run_due(services, services.clock.now()) >= 1
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval(
            "SELECT id FROM slot WHERE run = $1 AND name = 'approve'", uuid.UUID(run.id)
        )
    # Opened at 15:00 UTC on London time: 2.5 h today, 1.5 h Wednesday from 09:00.
    assert await finished_clock(services, str(slot_id)) == (
        "uk-london",
        datetime(2026, 12, 2, 10, 30, tzinfo=UTC),
    )


async def test_bad_teams_and_calendars_are_refused_and_change_nothing(
    services: container.Services,
) -> None:
    ada = await person(services, "ada")
    for team, calendar, field in (
        ("finance", "uk-london", "team"),
        ("user:fiona", "uk-london", "team"),
        ("role:finance", "atlantis", "calendar"),
    ):
        with pytest.raises(errors.ValidationError) as refused:
            await team_calendars.set_team_calendar(services, ada, team, calendar)
        assert refused.value.facts.get("field") == field
    with pytest.raises(errors.Forbidden):
        await team_calendars.set_team_calendar(
            services, await person(services, "fiona"), "role:finance", "uk-london"
        )
    assert await team_calendars.listed(services, ada) == []


async def test_over_graphql_admins_set_it_and_the_clock_names_the_team_link(
    services: container.Services,
    api: Any,
    tokens: dict[str, str],
) -> None:
    await started(services)
    refused = (
        await gql(
            api, SET, {"team": "role:finance", "calendar": "uk-london"}, token=tokens["fiona"]
        )
    ).ok()["setTeamCalendar"]
    assert refused["__typename"] == "NotAllowed"
    bad = (
        await gql(api, SET, {"team": "role:finance", "calendar": "atlantis"}, token=tokens["ada"])
    ).ok()["setTeamCalendar"]
    assert (bad["__typename"], bad["field"]) == ("InvalidInput", "calendar")
    done = (
        await gql(api, SET, {"team": "role:finance", "calendar": "uk-london"}, token=tokens["ada"])
    ).ok()["setTeamCalendar"]
    assert done == {
        "__typename": "SetTeamCalendarSuccess",
        "team": "role:finance",
        "calendar": "uk-london",
        "movedSlots": 1,
    }
    edges = (await gql(api, CLOCKS, {}, token=tokens["fiona"])).ok()["inbox"]["edges"]
    [slot] = [e["node"] for e in edges if e["node"]["name"] == "approve"]
    [finished] = slot["clocks"]
    assert (finished["calendar"], finished["calendarLink"]) == ("uk-london", "team")
    listed = (
        await gql(api, "{ teamCalendars { team calendar setBy } }", {}, token=tokens["ada"])
    ).ok()["teamCalendars"]
    assert listed == [{"team": "role:finance", "calendar": "uk-london", "setBy": "ada"}]


async def test_setting_a_teams_calendar_raced_against_a_claim_has_one_consistent_outcome(
    services: container.Services,
) -> None:
    """setTeamCalendar and a claim of a slot open to that team, on real connections, each
    order played: the slot ends claimed and its clock on the team's new calendar (the
    claim's chain resolved after the change, or the change moving the claimed slot), and its
    timeline says so; never a clock left on the old calendar."""
    ada, fiona = await person(services, "ada"), await person(services, "fiona")
    for n, calendar in enumerate(["uk-london", None, "uk-london", None]):
        slot_id = await started(services)
        expected = "uk-london" if calendar else "us-new-york"
        claiming = slot_service.claim(services, fiona, slot_id, None)
        setting = team_calendars.set_team_calendar(services, ada, "role:finance", calendar)
        if n % 2:  # both orders of starting
            await asyncio.gather(setting, claiming)
        else:
            await asyncio.gather(claiming, setting)
        async with services.db.connection() as conn:
            row = await conn.fetchrow(
                "SELECT status, holder FROM slot WHERE id = $1", uuid.UUID(slot_id)
            )
        assert (row["status"], row["holder"]) == ("claimed", "fiona")
        assert (await finished_clock(services, slot_id))[0] == expected, (n, calendar)
