"""slaDryRun over HTTP: the support example's timeline played on a scratch clock (deadlines,
reminders, escalations, breaches, the walk behind each), nothing stored, and its refusals."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

DRY_RUN = (
    Path(__file__).resolve().parents[2] / "graphql" / "operations" / "sla_dry_run.graphql"
).read_text()
TABLES = ("run", "subject", "slot", "sla_clock", "timer", "audit_event", "notification")


def at(day: int, hour: int, minute: int = 0) -> str:
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC).isoformat()


#: The support example's story: triaged at 09:10 as P2, Sasha picks it up at 09:20, asks the
#: customer at 12:20, who answers on Wednesday at 10:00; nobody answers after that.
TICKET_TIMELINE: list[dict[str, Any]] = [
    {"at": at(1, 9), "kind": "start"},
    {"at": at(1, 9, 10), "kind": "complete", "slot": "triage", "by": "tess",
     "payload": {"priority": "P2", "category": "bug"}},
    {"at": at(1, 9, 20), "kind": "claim", "slot": "first_response", "by": "sasha"},
    {"at": at(1, 12, 20), "kind": "move", "name": "ask_customer", "by": "sasha",
     "groups": ["billing-support"], "payload": {"question": "Which invoices?"}},
    {"at": at(2, 10), "kind": "complete", "slot": "customer_reply",
     "payload": {"reply": "All of them"}},
    {"at": at(2, 15), "kind": "end"},
]  # fmt: skip


async def play(world: World, events: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    variables = {"workflow": "support-ticket", "subject": w.TICKET, "events": events, **more}
    answer = await gql(world.client, DRY_RUN, variables, token=world.people["fiona"])
    return dict(answer.ok()["slaDryRun"])


async def counts(database_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        return {t: int(await conn.fetchval(f"SELECT count(*) FROM {t}")) for t in TABLES}
    finally:
        await conn.close()


async def test_the_support_story_played_without_touching_live_data(
    world: World, database_url: str
) -> None:
    before = await counts(database_url)
    found = await play(world, TICKET_TIMELINE)
    assert found["__typename"] == "SlaDryRun"
    assert (found["workflow"], found["version"], found["state"]) == ("support-ticket", 1, "open")
    clocks = {(m["slot"], m["clock"]["milestone"]): m["clock"] for m in found["milestones"]}
    # Triage: 30 minutes round the clock, met at 09:10.
    assert clocks[("triage", "finished")]["dueAt"] == at(1, 9, 30)
    assert clocks[("triage", "finished")]["status"] == "MET"
    # First response: 4 business hours from 09:10; 3h10m spent when the customer was asked,
    # 50 minutes left from Wednesday 10:00: due 10:50, breached then (nobody answered).
    first = clocks[("first_response", "finished")]
    assert (first["dueAt"], first["breachedAt"], first["status"]) == (
        at(2, 10, 50),
        at(2, 10, 50),
        "BREACHED",
    )
    assert "paused 2026-12-01T12:20:00+00:00 -> 2026-12-02T10:00:00+00:00" in first["explain"]
    assert any(line.startswith("calendar uk-london: 3h10m") for line in first["explain"])
    assert [(b["at"], b["slot"]) for b in found["breaches"]] == [(at(2, 10, 50), "first_response")]
    # At 75 % (12:10) the holder and team are reminded; on the breach the lead is brought in.
    assert [(r["at"], r["slot"]) for r in found["reminders"]] == [
        (at(1, 12, 10), "first_response"),
        (at(2, 10, 50), "first_response"),
        (at(2, 14, 50), "first_response"),
    ]
    assert {(e["at"], e["kind"]) for e in found["escalations"]} == {
        (at(2, 10, 50), "slot.escalated"),
        (at(2, 14, 50), "slot.escalated"),
    }
    assert await counts(database_url) == before  # nothing stored


async def test_a_raised_priority_is_recomputed_in_the_dry_run(world: World) -> None:
    events = [
        *TICKET_TIMELINE[:3],
        {"at": at(1, 11), "kind": "subject", "attributes": {"priority": "P1"}},
        {"at": at(1, 18), "kind": "end"},
    ]
    found = await play(world, events)
    clocks = {(m["slot"], m["clock"]["milestone"]): m["clock"] for m in found["milestones"]}
    # P1: 8 hours round the clock, the 1h50m already spent kept (keep-elapsed): 17:10.
    resolution = clocks[("resolution", "finished")]
    assert resolution["dueAt"] == at(1, 17, 10)
    assert [(t["since"], t["dueAt"], t["policy"]) for t in resolution["terms"]] == [
        (at(1, 9, 10), at(3, 9, 10), None),
        (at(1, 11), at(1, 17, 10), "keep-elapsed"),
    ]
    assert resolution["breachedAt"] == at(1, 17, 10)


async def test_refusals_name_the_event_and_the_cap(world: World) -> None:
    start = {"at": at(1, 9), "kind": "start"}
    refused = await play(world, [start, {"at": at(1, 10), "kind": "claim", "slot": "nope"}])
    assert refused["__typename"] == "DryRunEventRefused"
    assert (refused["index"], refused["kind"], refused["reason"]) == (1, "claim", "SLOT_NOT_OPEN")
    assert "live slots: triage" in refused["message"]

    many = [start] + [{"at": at(1, 10), "kind": "end"}] * 200
    too_long = await play(world, many)
    assert too_long["__typename"] == "DryRunTooLong"
    assert (too_long["limit"], too_long["allowed"], too_long["asked"]) == ("events", 200, 201)

    later = (datetime(2026, 12, 1, tzinfo=UTC) + timedelta(days=400)).isoformat()
    too_far = await play(world, [start, {"at": later, "kind": "end"}])
    assert (too_far["__typename"], too_far["limit"], too_far["allowed"]) == (
        "DryRunTooLong",
        "span_days",
        366,
    )

    backwards = await play(world, [start, {"at": at(1, 8), "kind": "end"}])
    assert (backwards["__typename"], backwards["code"]) == ("InvalidInput", "INVALID_INPUT")
    assert "events[1]" in backwards["message"]
    unknown = await play(world, [start, {"at": at(1, 10), "kind": "teleport"}])
    assert "kind 'teleport' is not one of" in unknown["message"]
    no_start = await play(world, [{"at": at(1, 10), "kind": "end"}])
    assert "events[0] must be the start" in no_start["message"]

    missing = await gql(
        world.client,
        DRY_RUN,
        {"workflow": "nope", "subject": {}, "events": [start]},
        token=world.people["fiona"],
    )
    assert missing.ok()["slaDryRun"]["code"] == "NOT_FOUND"
    not_an_object = await play(world, [start], subject=["P1"])
    assert not_an_object["code"] == "INVALID_INPUT"
    assert not_an_object["message"].startswith("subject must be an object of attributes")


async def test_a_caller_must_sign_in(world: World) -> None:
    answer = await gql(
        world.client,
        DRY_RUN,
        {"workflow": "support-ticket", "subject": w.TICKET, "events": TICKET_TIMELINE},
        token=str(uuid.uuid4()),
    )
    assert answer.error_codes == ["UNAUTHENTICATED"]
