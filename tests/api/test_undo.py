"""Undo within a window over HTTP (docs/history.md, "Undo"): the support ticket's triage is
undoable by its triager for ten minutes, asking the customer by the team for fifteen."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

import httpx
import pytest

from taskflow.api import app as api_app
from taskflow.service.clocks import timers
from tests import conftest
from tests.api import workflows as w
from tests.api.conftest import World
from tests.api.test_inbox_queries import Counter
from tests.conftest import gql

pytestmark = pytest.mark.anyio

UNDO = """mutation($input: UndoInput!) { undo(input: $input) { __typename
  ... on RunSuccess { run { state version } }
  ... on NotUndoable { reason } ... on UndoWindowExpired { until }
  ... on NotSameActor { actor } ... on StaleVersion { currentVersion }
  ... on Refusal { code message } } }"""
RUN = """query($id: ID!) { run(id: $id) { state version undoable
  undoTarget { state reverses redo until }
  slots { name status holder }
  history { state via entryId undoneBy }
  standing: history(effective: true) { state via } } }"""


async def undo(client: httpx.AsyncClient, token: str, run_id: str, **more: Any) -> dict[str, Any]:
    variables = {"input": {"runId": run_id, "reason": "wrong priority", **more}}
    found: dict[str, Any] = (await gql(client, UNDO, variables, token=token)).ok()["undo"]
    return found


async def run_of(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(client, RUN, {"id": run_id}, token=token)).ok()["run"]
    return found


async def triaged(world: World, reference: str = "T-1", took: timedelta = timedelta(0)) -> str:
    """A ticket Tess triaged (claimed, completed ``took`` later): the run is in ``open``."""
    client, people = world.client, world.people
    ticket = {**w.TICKET, "reference": reference}
    started = await w.start(
        client, people["helpdesk"], "support-ticket", "ticket", reference, ticket
    )
    slot = await w.slot_named(client, people["tess"], "triage", reference)
    assert (await w.claim(client, people["tess"], slot["id"]))["__typename"] == "SlotSuccess"
    world.clock.advance(took)
    done = await w.complete(
        client, people["tess"], slot["id"], {"priority": "P2", "category": "billing"}
    )
    assert done["run"]["state"] == "open"
    run_id: str = started["run"]["id"]
    return run_id


async def test_the_triager_undoes_her_triage_and_the_slot_is_hers_again(world: World) -> None:
    client, people = world.client, world.people
    run_id = await triaged(world)
    before = await run_of(client, people["tess"], run_id)
    assert before["undoable"] is True
    assert before["undoTarget"]["state"] == "new"
    assert before["undoTarget"]["redo"] is False

    world.clock.advance(timedelta(minutes=3))
    undone = await undo(client, people["tess"], run_id, expectedVersion=before["version"])
    assert undone["__typename"] == "RunSuccess", undone
    assert undone["run"]["state"] == "new"

    after = await run_of(client, people["tess"], run_id)
    live = [s for s in after["slots"] if s["status"] in ("OPEN", "CLAIMED")]
    assert [(s["name"], s["status"], s["holder"]) for s in live] == [("triage", "CLAIMED", "tess")]
    assert [v["state"] for v in after["standing"]] == ["new"]
    literal = after["history"]
    assert [(v["state"], v["via"]) for v in literal] == [
        ("new", "start"),
        ("open", "route"),
        ("new", "undo"),
    ]
    assert literal[1]["undoneBy"] == literal[2]["entryId"]
    # Undoing the undo is a redo: the ticket is back with the team.
    assert after["undoTarget"]["redo"] is True
    redone = await undo(client, people["tess"], run_id)
    assert redone["run"]["state"] == "open", redone
    final = await run_of(client, people["tess"], run_id)
    assert [v["state"] for v in final["standing"]] == ["new", "open"]


async def test_undo_is_refused_with_its_reason_and_changes_nothing(world: World) -> None:
    client, people = world.client, world.people
    started = await w.start(client, people["helpdesk"], "support-ticket", "ticket", "T-2", w.TICKET)
    fresh = await undo(client, people["tess"], started["run"]["id"])
    assert fresh["code"] == "NO_HISTORY", fresh

    run_id = await triaged(world, "T-3")
    version = (await run_of(client, people["tess"], run_id))["version"]
    stale = await undo(client, people["tess"], run_id, expectedVersion=version - 1)
    assert stale["__typename"] == "StaleVersion"
    other = await undo(client, people["tara"], run_id)  # a lead, not the triager
    assert other == {
        "__typename": "NotSameActor",
        "actor": "tess",
        "code": "NOT_SAME_ACTOR",
        "message": other["message"],
    }
    world.clock.advance(timedelta(minutes=11))
    late = await undo(client, people["tess"], run_id)
    assert late["__typename"] == "UndoWindowExpired", late
    assert (await run_of(client, people["tess"], run_id))["undoable"] is False
    assert (await run_of(client, people["tess"], run_id))["state"] == "open"


ASKED = """query($id: ID!) { run(id: $id) { state slots { name status holder } } }"""


async def asked(world: World, reference: str) -> str:
    """A triaged ticket whose first response Sasha holds and on which she asked the customer."""
    client, people = world.client, world.people
    run_id = await triaged(world, reference)
    response = await w.slot_named(client, people["sasha"], "first_response", reference)
    assert (await w.claim(client, people["sasha"], response["id"]))["__typename"] == "SlotSuccess"
    variables = {"input": {"runId": run_id, "move": "ask_customer", "input": {"question": "?"}}}
    moved = (await gql(client, MOVE, variables, token=people["sasha"])).ok()["move"]
    assert moved["run"]["state"] == "waiting_for_customer", moved
    return run_id


MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename
  ... on RunSuccess { run { state } } ... on Refusal { code message } } }"""


async def test_undo_needs_the_run_and_the_changes_own_rule(world: World) -> None:
    """ask_customer may be undone by the ticket's team: another team's agent does not see
    the run, the triager (who may read it) is not the team, a team mate may."""
    client, people = world.client, world.people
    run_id = await asked(world, "T-4")
    assert (await undo(client, people["fiona"], run_id))["__typename"] == "NotFoundRefusal"
    refused = await undo(client, people["tess"], run_id)
    assert refused["__typename"] == "NotUndoable", refused
    assert (await run_of(client, people["tess"], run_id))["undoable"] is False
    done = await undo(client, people["sven"], run_id)
    assert done["run"]["state"] == "open", done
    # The held slots resume with their holder; the customer's reply slot is gone.
    slots = (await gql(client, ASKED, {"id": run_id}, token=people["sven"])).ok()["run"]["slots"]
    live = {(s["name"], s["status"], s["holder"]) for s in slots if s["status"] != "CANCELLED"}
    assert ("first_response", "CLAIMED", "sasha") in live
    assert not any(name == "customer_reply" for name, _, _ in live)


ROUNDS = 3
DUE = """query($id: ID!) { run(id: $id) { slots { status clocks { dueAt metAt } } } }"""
#: What a timer of a slot writes when it fires.
FIRED = ["clock.breached", "reminder.fired", "slot.escalated"]


async def test_undo_against_complete_has_one_outcome(world: World) -> None:
    """Tess undoes her triage while Sven completes the ticket's last slot, which moves the
    run on to ``resolved``: whichever locks the run first wins, the other is refused."""
    client, people = world.client, world.people
    for n in range(ROUNDS):
        reference = f"T-R{n}"
        run_id = await triaged(world, reference)
        for name, who, payload in (
            ("first_response", "sasha", {"message": "on it"}),
            ("resolution", "sven", {"outcome": "fixed", "summary": "done"}),
        ):
            slot = await w.slot_named(client, people[who], name, reference)
            assert (await w.claim(client, people[who], slot["id"]))["__typename"] == "SlotSuccess"
            if name == "first_response":
                await w.complete(client, people[who], slot["id"], payload)
        completing = w.complete(client, people["sven"], slot["id"], payload)
        undone, completed = await asyncio.gather(undo(client, people["tess"], run_id), completing)
        wins = [a for a in (undone, completed) if "run" in a]
        assert len(wins) == 1, (undone, completed)
        state = (await run_of(client, people["tess"], run_id))["state"]
        if wins[0] is undone:
            assert state == "new"
            assert completed["__typename"] != "CompleteSuccess", completed
        else:
            # The ticket moved on by a completion of ``open``, which is not undoable.
            assert state == "resolved"
            assert undone["__typename"] == "NotUndoable", undone


async def test_redo_against_a_breach_timer_has_one_outcome(world: World) -> None:
    """Tess undoes her triage, then redoes it just as the reopened triage slot's breach timer
    falls due: either the breach fires first (then the redo cancels the slot) or the redo
    cancels the slot and its timers first (then nothing fires); never a breach after it."""
    client, people, services = world.client, world.people, world.services
    for n in range(ROUNDS):
        start = world.clock.now()
        run_id = await triaged(world, f"T-B{n}", took=timedelta(minutes=25))
        world.clock.advance(timedelta(minutes=1))
        assert (await undo(client, people["tess"], run_id))["run"]["state"] == "new"
        # The triage clock (30 min) ran 25 min, stood still 1 min: due at start + 31, while
        # the redo is allowed (until ten minutes after the undo).
        world.clock.set(start + timedelta(minutes=31))
        due = (await gql(client, DUE, {"id": run_id}, token=people["tess"])).ok()["run"]["slots"]
        # Un-met, and the minute between triage and undo does not count.
        assert [c for s in due if s["status"] == "CLAIMED" for c in s["clocks"]] == [
            {"dueAt": (start + timedelta(minutes=31)).isoformat(), "metAt": None}
        ]
        redone, _ = await asyncio.gather(
            undo(client, people["tess"], run_id), timers.run_due(services, world.clock.now())
        )
        assert redone["run"]["state"] == "open", redone
        # Whatever fires later, nothing of the cancelled triage slot fires after the redo.
        await timers.run_due(services, world.clock.now() + timedelta(hours=2))
        lines = await w.timeline(client, people["tess"], run_id, [*FIRED, "state.entered"])
        redo_at = max(i for i, ln in enumerate(lines) if ln["kind"] == "state.entered")
        late = [ln for ln in lines[redo_at + 1 :] if ln["details"].get("slot") == "triage"]
        assert late == [], late
        world.clock.set(world.clock.now() + timedelta(days=1))


async def test_an_undo_sent_twice_with_its_key_undoes_once(world: World) -> None:
    client, people = world.client, world.people
    run_id = await triaged(world, "T-K")
    first = await undo(client, people["tess"], run_id, idempotencyKey="undo-T-K")
    again = await undo(client, people["tess"], run_id, idempotencyKey="undo-T-K")
    assert first == again
    assert first["run"]["state"] == "new"
    found = await run_of(client, people["tess"], run_id)
    assert [(v["state"], v["via"]) for v in found["history"]] == [
        ("new", "start"),
        ("open", "route"),
        ("new", "undo"),
    ]


RUN_PAGE = """query($first: Int!) { runs(first: $first, filter: {workflow: "support-ticket"}) {
  edges { node { undoable undoTarget { state redo } } } } }"""


async def test_a_page_of_runs_asks_undo_in_the_same_statements_as_one_run(world: World) -> None:
    """``Run.undoable`` and ``Run.undoTarget`` are batched per request: no statement a run."""
    for n in range(6):
        await triaged(world, f"T-PAGE-{n}")
    counter = Counter()
    database = await conftest.reconnect(world.services.db, query_logger=counter)
    application = api_app.create_app(services=dataclasses.replace(world.services, db=database))
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=application), base_url="http://taskflow.test"
        ) as http:

            async def page(first: int) -> tuple[list[dict[str, Any]], int]:
                counter.statements.clear()
                found = await gql(http, RUN_PAGE, {"first": first}, token=world.people["tess"])
                runs = [e["node"] for e in found.ok()["runs"]["edges"]]
                return runs, len(counter.statements)

            await page(1)  # warm the pool: connections, type codecs
            one, for_one = await page(1)
            six, for_six = await page(6)
    finally:
        await database.close()
    assert len(one) == 1
    assert six == [{"undoable": True, "undoTarget": {"state": "new", "redo": False}}] * 6
    assert for_six == for_one
