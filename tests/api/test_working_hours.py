"""Principals' working hours and leave over HTTP: who may set them, what bad input gets,
reminders that wait for the holder's next working instant, and assign refusing someone
on leave unless forced.

The FrozenClock starts on Tuesday 1 December 2026 at 09:00 UTC (Berlin is UTC+1 then).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_sla_flow import inbox_clocks, notifications, step
from tests.conftest import gql

pytestmark = pytest.mark.anyio

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"
HOURS = (OPERATIONS / "set_working_hours.graphql").read_text()
ADD = (OPERATIONS / "add_leave.graphql").read_text()
REMOVE = (OPERATIONS / "remove_leave.graphql").read_text()
ME = "{ me { login workingHours { timeZone windows calendar } leave { from to note } } }"
ASSIGN = """mutation($input: AssignInput!) { assign(input: $input) { __typename
  ... on SlotSuccess { slot { holder } }
  ... on OnLeave { principal leaveFrom leaveTo }
  ... on Refusal { code message } } }"""
CLAIM_NEXT = """mutation { claimNext(input: {filter: {workflow: "expense-approval"}}) {
  __typename ... on SlotSuccess { slot { holder } } ... on Refusal { code message } } }"""


def at(day: int, hour: int, minute: int = 0) -> str:
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC).isoformat()


def pid(login: str) -> str:
    return relay.to_global_id("Principal", login)


async def run(client: httpx.AsyncClient, text: str, token: str, **variables: Any) -> Any:
    data = (await gql(client, text, variables, token=token)).ok()
    return next(iter(data.values()))


async def me(client: httpx.AsyncClient, token: str) -> dict[str, Any]:
    return dict((await gql(client, ME, {}, token=token)).ok()["me"])


async def test_people_set_their_own_hours_and_leave_admins_anyones_and_no_one_else(
    world: World,
) -> None:
    client, people = world.client, world.people
    windows = {"mon": [["09:00", "13:00"], ["14:00", "17:30"]], "fri": [["09:00", "12:00"]]}
    mine = await run(client, HOURS, people["fiona"], timeZone="Europe/London", windows=windows)
    assert mine["__typename"] == "SetWorkingHoursSuccess", mine
    assert (await me(client, people["fiona"]))["workingHours"] == {
        "timeZone": "Europe/London",
        "windows": windows,
        "calendar": None,
    }
    # A lead reaches slots, never principals; a colleague neither.
    for who in ("leah", "frank"):
        refused = await run(
            client,
            ADD,
            people[who],
            principalId=pid("fiona"),
            **{"from": at(24, 0), "to": at(28, 0)},
        )
        assert refused["code"] == "FORBIDDEN", refused
        again = await run(
            client,
            HOURS,
            people[who],
            principalId=pid("fiona"),
            timeZone="UTC",
            calendar="de-berlin",
        )
        assert again["code"] == "FORBIDDEN", again
    by_admin = await run(
        client,
        ADD,
        people["ada"],
        principalId=pid("fiona"),
        **{"from": at(24, 0), "to": at(28, 0), "note": "Christmas"},
    )
    assert by_admin["__typename"] == "AddLeaveSuccess", by_admin
    named = await run(
        client,
        HOURS,
        people["ada"],
        principalId=pid("fiona"),
        timeZone="Europe/Berlin",
        calendar="de-berlin",
    )
    assert named["principal"]["workingHours"]["calendar"] == "de-berlin"
    stored = await me(client, people["fiona"])
    assert stored["leave"] == [{"from": at(24, 0), "to": at(28, 0), "note": "Christmas"}]
    removed = await run(client, REMOVE, people["fiona"], **{"from": at(24, 0), "to": at(28, 0)})
    assert removed["principal"]["leave"] == []


@pytest.mark.parametrize(
    ("variables", "words"),
    [
        ({"timeZone": "Mars/Olympus", "windows": {"mon": [["09:00", "17:00"]]}}, "time zone"),
        ({"timeZone": "UTC", "windows": {"mon": [["17:00", "09:00"]]}}, "ends before"),
        ({"timeZone": "UTC", "windows": {"mon": [["9 am", "17:00"]]}}, "HH:MM"),
        ({"timeZone": "UTC", "windows": {"funday": [["09:00", "17:00"]]}}, "unknown days"),
        (
            {"timeZone": "UTC", "windows": {"mon": [["09:00", "12:00"], ["11:00", "13:00"]]}},
            "overlap",
        ),
        ({"timeZone": "UTC", "windows": {}}, "empty"),
        ({"timeZone": "UTC", "calendar": "atlantis"}, "no calendar"),
        ({"timeZone": "UTC"}, "either"),
    ],
)
async def test_bad_working_hours_are_refused_naming_the_fix_and_change_nothing(
    world: World, variables: dict[str, Any], words: str
) -> None:
    client, people = world.client, world.people
    before = await me(client, people["frank"])
    refused = await run(client, HOURS, people["frank"], **variables)
    assert refused["code"] == "INVALID_INPUT", refused
    assert words in refused["message"]
    assert await me(client, people["frank"]) == before


async def test_bad_leave_is_refused_and_removing_leave_that_is_not_there_too(
    world: World,
) -> None:
    client, people = world.client, world.people
    backwards = await run(client, ADD, people["frank"], **{"from": at(28, 0), "to": at(24, 0)})
    assert backwards["code"] == "INVALID_INPUT"
    assert "end after" in backwards["message"]
    absent = await run(client, REMOVE, people["frank"], **{"from": at(2, 0), "to": at(3, 0)})
    assert absent["code"] == "INVALID_INPUT"
    assert "no leave" in absent["message"]
    assert (await me(client, people["frank"]))["leave"] == []


async def test_a_reminder_to_the_holder_waits_for_their_working_hours_and_their_leave(
    world: World,
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    # Sasha works Tuesdays 14:00-18:00 Berlin (13:00-17:00 UTC) only; Sven has no hours
    # of his own (his calendar's hours count).
    hours = await run(
        client,
        HOURS,
        people["sasha"],
        timeZone="Europe/Berlin",
        windows={"tue": [["14:00", "18:00"]], "wed": [["08:00", "18:00"]]},
    )
    assert hours["__typename"] == "SetWorkingHoursSuccess", hours
    await w.start(client, people["helpdesk"], "support-ticket", "ticket", "T-1", w.TICKET)
    triage = (await inbox_clocks(client, people["tess"]))["triage"]
    await step(services, frozen_clock, at(1, 9, 10))
    await w.claim(client, people["tess"], triage["id"])
    await w.complete(client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"})
    first = (await inbox_clocks(client, people["sasha"]))["first_response"]
    await step(services, frozen_clock, at(1, 9, 20))
    await w.claim(client, people["sasha"], first["id"])
    # 12:10 UTC is the 75 % reminder: Sven hears it now, Sasha at 13:00 UTC.
    assert await step(services, frozen_clock, at(1, 12, 10)) == 2
    [sven] = await notifications(client, people["sven"])
    [sasha] = await notifications(client, people["sasha"])
    assert sven["deliverAt"] == at(1, 12, 10)
    assert sasha["deliverAt"] == at(1, 13)
    assert sasha["details"]["deferred"] is True

    # On leave until Wednesday 10:00 UTC: the breach reminder (Wednesday 09:10... here
    # 13:10 Tuesday) waits for the end of her leave, inside her Wednesday hours.
    added = await run(client, ADD, people["sasha"], **{"from": at(1, 12, 30), "to": at(2, 10)})
    assert added["__typename"] == "AddLeaveSuccess", added
    assert await step(services, frozen_clock, at(1, 13, 10)) >= 1
    later = [n for n in await notifications(client, people["sasha"]) if n["id"] != sasha["id"]]
    assert later
    assert all(n["deliverAt"] == at(2, 10) for n in later)


async def test_assign_refuses_a_principal_on_leave_unless_forced_and_claim_next_is_allowed(
    world: World,
) -> None:
    client, people, frozen_clock = world.client, world.people, world.clock
    started = await w.start(client, people["app"], "expense-approval", "expense", "E-9", w.EXPENSE)
    assert started["__typename"] == "StartRunSuccess"
    slot = await w.slot_named(client, people["fiona"], "finance_review")
    added = await run(client, ADD, people["frank"], **{"from": at(1, 0), "to": at(4, 0)})
    assert added["__typename"] == "AddLeaveSuccess", added

    refused = await run(
        client,
        ASSIGN,
        people["leah"],
        input={"slotId": slot["id"], "to": "frank", "reason": "cover"},
    )
    assert refused == {
        "__typename": "OnLeave",
        "principal": "frank",
        "leaveFrom": at(1, 0),
        "leaveTo": at(4, 0),
        "code": "ON_LEAVE",
        "message": refused["message"],
    }
    assert "force" in refused["message"]
    assert (await w.slot_named(client, people["fiona"], "finance_review"))["holder"] is None

    forced = await run(
        client, ASSIGN, people["leah"], input={"slotId": slot["id"], "to": "frank", "force": True}
    )
    assert forced["slot"]["holder"] == "frank", forced

    # Once the leave is over, no force is needed.
    frozen_clock.set(datetime(2026, 12, 4, 0, tzinfo=UTC))
    back = await run(client, ASSIGN, people["leah"], input={"slotId": slot["id"], "to": "fiona"})
    assert back["slot"]["holder"] == "fiona", back


async def test_someone_on_leave_may_still_claim_next_work_they_chose_to_do(world: World) -> None:
    client, people = world.client, world.people
    await w.start(client, people["app"], "expense-approval", "expense", "E-10", w.EXPENSE)
    await run(client, ADD, people["frank"], **{"from": at(1, 0), "to": at(4, 0)})
    claimed = await run(client, CLAIM_NEXT, people["frank"])
    assert claimed["slot"]["holder"] == "frank", claimed


async def test_leave_added_at_the_same_moment_is_all_kept(world: World) -> None:
    # Each request on its own connection: the principal's row lock orders the two
    # read-and-append writes, so neither absence overwrites the other.
    client, people = world.client, world.people
    spans = [(at(day, 0), at(day, 12)) for day in range(7, 17)]
    answers = await asyncio.gather(
        *(run(client, ADD, people["frank"], **{"from": a, "to": b}) for a, b in spans)
    )
    assert {answer["__typename"] for answer in answers} == {"AddLeaveSuccess"}
    stored = (await me(client, people["frank"]))["leave"]
    assert [(entry["from"], entry["to"]) for entry in stored] == spans
