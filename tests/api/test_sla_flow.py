"""The support example through GraphQL with a moved clock: due instants, reminders, pause, breach.

The FrozenClock starts on Tuesday 1 December 2026 at 09:00 UTC (London is on UTC
in winter, so uk-london hours read as UTC here). Timers fire through
``run_due(now)``, the worker's entry point, without sleeping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests import reports_dataset
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

TICKET = w.TICKET


CLOCKS = """query($first: Int) { inbox(first: $first) { edges { node {
  id name dueAt priority holder status
  clocks { milestone calendar status dueAt metAt breachedAt explain
           budget { seconds text kind } elapsed { seconds text } remaining { seconds text }
           pauses { start end } } } } } }"""

NOTIFICATIONS = """query($first: Int, $after: String) {
  notifications(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor }
  edges { node { id kind message deliverAt createdAt details slotId } } } }"""

RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename
  ... on Refusal { code message } } }"""

MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename
  ... on Refusal { code message } } }"""

UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on Refusal { code message } } }"""


def at(day: int, hour: int, minute: int = 0) -> str:
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC).isoformat()


async def inbox_clocks(client: httpx.AsyncClient, token: str) -> dict[str, dict[str, Any]]:
    result = await gql(client, CLOCKS, {"first": 50}, token=token)
    return {e["node"]["name"]: e["node"] for e in result.ok()["inbox"]["edges"]}


def clock_of(slot: dict[str, Any], milestone: str) -> dict[str, Any]:
    [found] = [c for c in slot["clocks"] if c["milestone"] == milestone]
    return found


async def notifications(client: httpx.AsyncClient, token: str) -> list[dict[str, Any]]:
    result = await gql(client, NOTIFICATIONS, {"first": 50}, token=token)
    return [e["node"] for e in result.ok()["notifications"]["edges"]]


async def step(services: container.Services, frozen_clock: clock.FrozenClock, to: str) -> int:
    frozen_clock.set(datetime.fromisoformat(to))
    return await timers.run_due(services, frozen_clock.now())


async def ask_customer(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    """The agent asks the customer "Which?" (the move that stops the ticket's clocks)."""
    variables = {
        "input": {"runId": run_id, "move": "ask_customer", "input": {"question": "Which?"}}
    }
    return dict((await gql(client, MOVE, variables, token=token)).ok()["move"])


async def test_a_support_ticket_with_due_instants_reminders_pause_and_breach(world: World) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    started = await w.start(
        client, people["helpdesk"], "support-ticket", "ticket", "T-81723", TICKET
    )
    run_id = started["run"]["id"]

    # Triage is due in 30 minutes round the clock; the desk answers at 09:10.
    triage = (await inbox_clocks(client, people["tess"]))["triage"]
    assert triage["dueAt"] == at(1, 9, 30)
    assert clock_of(triage, "finished")["calendar"] == "24x7"
    await step(services, frozen_clock, at(1, 9, 10))
    await w.claim(client, people["tess"], triage["id"])
    done = await w.complete(
        client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"}
    )
    assert done["run"]["state"] == "open"

    # The team's inbox, most urgent first: pick-up within 30 minutes (09:40), the first
    # response within 4 business hours (13:10), the resolution within 2 business days of
    # 8h30 (17 h: Thursday 09:10).
    mine = await inbox_clocks(client, people["sasha"])
    first, resolution = mine["first_response"], mine["resolution"]
    assert first["dueAt"] == at(1, 9, 40)
    assert clock_of(first, "finished")["dueAt"] == at(1, 13, 10)
    assert clock_of(first, "finished")["budget"] == {
        "seconds": 4 * 3600,
        "text": "4h business time",
        "kind": "BUSINESS",
    }
    assert clock_of(resolution, "finished")["dueAt"] == at(3, 9, 10)
    order = [n["name"] for n in (await w.inbox(client, people["sasha"]))]
    assert order == ["first_response", "resolution"]

    # Sasha picks it up at 09:20: the assigned clock is met, the slot now due at 13:10.
    await step(services, frozen_clock, at(1, 9, 20))
    await w.claim(client, people["sasha"], first["id"])
    first = (await inbox_clocks(client, people["sasha"]))["first_response"]
    assert clock_of(first, "assigned")["status"] == "MET"
    assert clock_of(first, "assigned")["metAt"] == at(1, 9, 20)
    assert first["dueAt"] == at(1, 13, 10)

    # 12:10 is 75 % of the four hours: the holder and the team are reminded, once.
    assert await step(services, frozen_clock, at(1, 12, 9)) == 0
    assert await step(services, frozen_clock, at(1, 12, 10)) == 2  # 75 %: reminder, at risk
    assert await step(services, frozen_clock, at(1, 12, 15)) == 0
    first = (await inbox_clocks(client, people["sasha"]))["first_response"]
    assert clock_of(first, "finished")["status"] == "AT_RISK"
    sven = await notifications(client, people["sven"])
    assert [n["kind"] for n in sven] == ["reminder"]
    assert any("Answer T-81723" in n["message"] for n in sven)
    assert await notifications(client, people["tess"]) == []

    # Asking the customer at 12:20 stops the clocks (3h 10m of 4h spent on the first response).
    await step(services, frozen_clock, at(1, 12, 20))
    moved = await ask_customer(client, people["sasha"], run_id)
    assert moved["__typename"] == "RunSuccess", moved
    held = (await inbox_clocks(client, people["sasha"]))["first_response"]
    assert held["holder"] == "sasha"
    assert clock_of(held, "finished")["status"] == "PAUSED"
    assert clock_of(held, "finished")["dueAt"] is None
    assert clock_of(held, "finished")["elapsed"]["text"] == "3h 10m business time"

    # Nothing fires while paused, however long the customer takes.
    assert await step(services, frozen_clock, at(2, 9, 59)) == 0

    # The customer answers on Wednesday at 10:00: the clocks run again, 50 minutes left.
    await step(services, frozen_clock, at(2, 10))
    raised = (
        await gql(
            client,
            RAISE,
            {
                "input": {
                    "event": "customer-replied",
                    "payload": {"reply": "Attached."},
                    "target": {"correlationKey": "T-81723"},
                }
            },
            token=people["helpdesk"],
        )
    ).ok()["raiseEvent"]
    assert raised["__typename"] == "RaiseEventSuccess", raised
    back = (await inbox_clocks(client, people["sasha"]))["first_response"]
    assert back["id"] == first["id"]  # the same slot, still Sasha's
    finished = clock_of(back, "finished")
    assert (finished["status"], finished["dueAt"]) == ("AT_RISK", at(2, 10, 50))
    assert finished["pauses"] == [{"start": at(1, 12, 20), "end": at(2, 10)}]
    assert any("paused" in line for line in finished["explain"])

    # 10:50: breached. The holder is told and the team lead brought in; every 4 business
    # hours after that it reminds again until done.
    assert await step(services, frozen_clock, at(2, 10, 50)) == 2  # breach + its reminder
    late = (await inbox_clocks(client, people["sasha"]))["first_response"]
    assert clock_of(late, "finished")["status"] == "BREACHED"
    assert clock_of(late, "finished")["breachedAt"] == at(2, 10, 50)
    assert clock_of(late, "finished")["remaining"]["seconds"] == 0
    tara = await notifications(client, people["tara"])
    assert [n["kind"] for n in tara][-1] == "reminder"
    assert await step(services, frozen_clock, at(2, 14, 50)) == 1  # 4 business hours later

    kinds = [e["kind"] for e in await w.timeline(client, people["ada"], run_id)]
    for expected in (
        "clock.started",
        "clock.met",
        "reminder.fired",
        "notification.sent",
        "slot.held",
        "clock.paused",
        "slot.resumed",
        "clock.resumed",
        "clock.breached",
        "slot.escalated",
    ):
        assert expected in kinds, expected
    assert (
        kinds.index("clock.paused") < kinds.index("clock.resumed") < kinds.index("clock.breached")
    )

    # Answered at 15:00: what the report reads of the ended slots (triage, the customer's
    # reply, the first response: held 29h 40m, paused 21h 40m of it, so 8 h worked) was
    # stored as each ended, and equals what the report's SQL measures on read.
    await step(services, frozen_clock, at(2, 15))
    await w.complete(client, people["sasha"], first["id"], {"message": "Found it."})
    assert await reports_dataset.assert_stored_measures_agree(services) == 3
    async with services.db.connection() as conn:
        worked = await conn.fetchval(
            "SELECT worked_us FROM slot WHERE name = 'first_response' AND run = $1::uuid",
            relay.from_global_id(run_id)[1],
        )
    assert worked == 8 * 3600 * 1_000_000


async def test_a_regrade_recomputes_the_due_instant_and_keeps_the_time_spent(world: World) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-2", TICKET)
    triage = await w.slot_named(client, people["tess"], "triage")
    await w.claim(client, people["tess"], triage["id"])
    await w.complete(client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"})
    await step(services, frozen_clock, at(1, 10))  # an hour of the first response spent
    updated = (
        await gql(
            client,
            UPDATE,
            {
                "input": {
                    "type": "ticket",
                    "externalId": "T-2",
                    "attributes": {**TICKET, "priority": "P1"},
                }
            },
            token=people["app"],
        )
    ).ok()["updateSubject"]
    assert updated["__typename"] == "UpdateSubjectSuccess", updated
    first = (await inbox_clocks(client, people["sasha"]))["first_response"]
    finished = clock_of(first, "finished")
    # P1: one hour round the clock from 09:00, with the hour already spent kept: due now.
    assert finished["dueAt"] == at(1, 10)
    assert finished["calendar"] == "24x7"
    assert await step(services, frozen_clock, at(1, 10)) >= 1
    timeline = await w.timeline(client, people["ada"], started["run"]["id"], ["clock.recomputed"])
    regraded = [e["details"] for e in timeline if e["details"]["slot"] == "first_response"]
    assert {(d["milestone"], d["old_due_at"], d["new_due_at"]) for d in regraded} >= {
        ("finished", at(1, 13), at(1, 10)),
    }


async def test_notifications_page_by_cursor(world: World) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    for n in range(3):
        await w.start(client, people["app"], "support-ticket", "ticket", f"T-{n}", TICKET)
    # Triage breaches at 09:30: the desk is told once per ticket.
    assert await step(services, frozen_clock, at(1, 9, 30)) == 9  # with 3 at-risk firings
    connection, rest = await w.two_pages(client, NOTIFICATIONS, "notifications", people["tess"], 2)
    assert connection["totalCount"] == 3
    assert connection["pageInfo"]["hasNextPage"] is True
    assert len(rest["edges"]) == 1
    assert rest["pageInfo"]["hasNextPage"] is False
    node_id = rest["edges"][0]["node"]["id"]
    mine = await gql(
        client, "query($id: ID!) { node(id: $id) { id } }", {"id": node_id}, token=people["tess"]
    )
    assert mine.ok()["node"] == {"id": node_id}
    theirs = await gql(
        client, "query($id: ID!) { node(id: $id) { id } }", {"id": node_id}, token=people["sven"]
    )
    assert theirs.ok()["node"] is None


async def test_slots_a_timer_ends_keep_their_report_measures(world: World) -> None:
    """The worker's batch stores the measures of the slots its firings end, as use cases do."""
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-9", TICKET)
    run_id = started["run"]["id"]
    triage = (await inbox_clocks(client, people["tess"]))["triage"]
    await w.claim(client, people["tess"], triage["id"])
    await w.complete(client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"})
    await step(services, frozen_clock, at(1, 9, 20))
    first = (await inbox_clocks(client, people["sasha"]))["first_response"]
    await w.claim(client, people["sasha"], first["id"])
    moved = await ask_customer(client, people["sasha"], run_id)
    assert moved["__typename"] == "RunSuccess", moved

    # The customer stays silent for four weeks (weekly follow-ups): the timeout closes it.
    frozen_clock.set(datetime.fromisoformat(at(1, 9, 20)) + timedelta(days=30))
    assert await timers.run_due(services, frozen_clock.now()) >= 1
    key = relay.from_global_id(run_id)[1]
    async with services.db.connection() as conn:
        state = await conn.fetchval("SELECT state FROM run WHERE id = $1::uuid", key)
        ended = await conn.fetch(
            "SELECT name, measured_clock FROM slot WHERE run = $1::uuid "
            "AND status = 'cancelled' ORDER BY name",
            key,
        )
    assert state == "closed"
    by_name = {r["name"]: r["measured_clock"] for r in ended}
    # The held first response and the open resolution ended with the run, measured then.
    assert by_name["first_response"] == "finished"
    assert by_name["resolution"] == "finished"
    assert await reports_dataset.assert_stored_measures_agree(services) >= 3
