"""A case's priority changes mid-run: each finished clock is recomputed under its own policy,
read over HTTP (dueAt, breachedAt, status, terms), with a ``clock.recomputed`` line per clock
and the breach timers the worker fires (docs/sla.md, "Recompute policies").

uk-london hours (09:00-17:30, UTC in December); the case starts Tuesday 1 December 09:00.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests import lock_waits
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import example_people, gql, services_fixture, tokens_for

pytestmark = pytest.mark.anyio

services = services_fixture(
    "services",
    Path(__file__).resolve().parent / "recompute_workflows.py",
    doc="The examples and the recompute workflow; the app may start and update its cases.",
    people=example_people(app_everywhere=True),
)


@pytest.fixture
def people(services: container.Services) -> dict[str, str]:
    """A token per principal as the services loaded them (the app granted every workflow)."""
    return tokens_for(services)


CLOCKS = """query($first: Int) { inbox(first: $first) { edges { node { name
  clocks { milestone status dueAt breachedAt
           terms { since until dueAt budget policy breached } } } } } }"""

UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on Refusal { code message } } }"""


def at(day: int, hour: int, minute: int = 0) -> str:
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC).isoformat()


async def finished_clocks(client: httpx.AsyncClient, token: str) -> dict[str, dict[str, Any]]:
    found = (await gql(client, CLOCKS, {"first": 10}, token=token)).ok()["inbox"]["edges"]
    return {e["node"]["name"]: e["node"]["clocks"][0] for e in found}


async def set_priority(world: World, value: str, case: str = "C-1") -> None:
    answer = await gql(
        world.client,
        UPDATE,
        {"input": {"type": "case", "externalId": case, "attributes": {"priority": value}}},
        token=world.people["app"],
    )
    assert answer.ok()["updateSubject"]["__typename"] == "UpdateSubjectSuccess"


async def recomputed_lines(world: World, run_id: str) -> dict[str, dict[str, Any]]:
    lines = await w.timeline(world.client, world.people["app"], run_id, ["clock.recomputed"])
    return {line["details"]["slot"]: line for line in lines}


async def breach_timers(world: World, run_id: str) -> list[tuple[str, str, str, datetime]]:
    local = uuid.UUID(relay.from_global_id(run_id)[1])
    async with world.services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT s.name, t.key, t.status, t.due_at FROM timer t JOIN slot s ON s.id = t.slot "
            "WHERE t.run = $1 AND t.kind = 'breach' ORDER BY s.name, t.key",
            local,
        )
    return [(r["name"], r["key"].split(":", 1)[1], r["status"], r["due_at"]) for r in rows]


async def start(world: World, priority: str, case: str = "C-1") -> str:
    world.clock.set(datetime.fromisoformat(at(1, 9)))
    started = await w.start(
        world.client, world.people["app"], "recompute", "case", case, {"priority": priority}
    )
    return str(started["run"]["id"])


async def test_a_raised_priority_under_each_policy(world: World) -> None:
    run_id = await start(world, "P3")  # 8 business hours: due Tuesday 17:00
    fiona = world.people["fiona"]
    world.clock.set(datetime.fromisoformat(at(1, 13)))  # 4 hours spent
    await set_priority(world, "P1")  # now 2 business hours

    seen = await finished_clocks(world.client, fiona)
    kept, restarted, retro = seen["kept"], seen["restarted"], seen["retro"]
    # keep-elapsed: 4h spent of 2h: due (and breached) at the recompute, not before it.
    assert (kept["dueAt"], kept["breachedAt"], kept["status"]) == (at(1, 13), at(1, 13), "BREACHED")
    # restart: two hours from 13:00.
    assert (restarted["dueAt"], restarted["breachedAt"]) == (at(1, 15), None)
    assert restarted["status"] == "RUNNING"
    # retroactive: as if 2h from 09:00: due 11:00, the breach back-dated.
    assert (retro["dueAt"], retro["breachedAt"], retro["status"]) == (
        at(1, 11),
        at(1, 11),
        "BREACHED",
    )
    # Each keeps the deadline in force before 13:00 (17:00) and says when it changed.
    for clock, policy in ((kept, "keep-elapsed"), (restarted, "restart"), (retro, "retroactive")):
        first, second = clock["terms"]
        assert (first["since"], first["until"], first["dueAt"]) == (at(1, 9), at(1, 13), at(1, 17))
        assert (first["policy"], first["breached"]) == (None, False)
        assert (second["since"], second["until"], second["policy"]) == (at(1, 13), None, policy)
        assert second["dueAt"] == clock["dueAt"]

    lines = await recomputed_lines(world, run_id)
    assert {k: v["details"]["policy"] for k, v in lines.items()} == {
        "kept": "keep-elapsed",
        "restarted": "restart",
        "retro": "retroactive",
    }
    for name, due in (("kept", at(1, 13)), ("restarted", at(1, 15)), ("retro", at(1, 11))):
        details = lines[name]["details"]
        assert (details["old_due_at"], details["new_due_at"]) == (at(1, 17), due)
        assert (details["old_budget"], details["new_budget"]) == (
            "8:00:00 business time on uk-london",
            "2:00:00 business time on uk-london",
        )
    assert lines["restarted"]["reason"] == "the subject changed; the clock starts again now"

    # The worker fires at once the two breaches (and at-risk timers) due already; the
    # restarted clock is at risk at 14:30 and breaches at 15:00.
    assert await timers.run_due(world.services, world.clock.now()) == 4
    world.clock.set(datetime.fromisoformat(at(1, 15)))
    assert await timers.run_due(world.services, world.clock.now()) == 2
    breached = await w.timeline(world.client, world.people["app"], run_id, ["clock.breached"])
    assert sorted(line["details"]["slot"] for line in breached) == ["kept", "restarted", "retro"]


async def test_a_lowered_priority_after_a_breach(world: World) -> None:
    run_id = await start(world, "P1")  # 2 business hours: due Tuesday 11:00
    fiona = world.people["fiona"]
    world.clock.set(datetime.fromisoformat(at(1, 11)))
    # Three breaches (the at-risk timers fired at 10:30).
    assert await timers.run_due(world.services, world.clock.now()) == 6
    world.clock.set(datetime.fromisoformat(at(1, 13)))
    await set_priority(world, "P3")  # 8 business hours

    seen = await finished_clocks(world.client, fiona)
    # keep-elapsed: due 17:00 now, the 11:00 breach stays on record.
    assert (seen["kept"]["dueAt"], seen["kept"]["breachedAt"]) == (at(1, 17), at(1, 11))
    assert seen["kept"]["status"] == "BREACHED"
    # restart: 8h from 13:00 is Wednesday 12:30; the 11:00 breach stays on record.
    assert (seen["restarted"]["dueAt"], seen["restarted"]["breachedAt"]) == (
        at(2, 12, 30),
        at(1, 11),
    )
    # retroactive: judged again on 8h from 09:00: not breached (4h of 8h spent).
    assert (seen["retro"]["dueAt"], seen["retro"]["breachedAt"]) == (at(1, 17), None)
    assert seen["retro"]["status"] == "RUNNING"
    assert [t["breached"] for t in seen["retro"]["terms"]] == [True, False]

    armed = [(n, k, d) for n, k, s, d in await breach_timers(world, run_id) if s == "armed"]
    # keep-elapsed breaches once per clock; restart and retroactive judge the new term again.
    assert [(n, k) for n, k, _ in armed] == [
        ("restarted", "breach:finished:1"),
        ("retro", "breach:finished:1"),
    ]
    assert [d.isoformat() for _, _, d in armed] == [at(2, 12, 30), at(1, 17)]
    world.clock.set(datetime.fromisoformat(at(1, 17)))
    # The retroactive clock's new term: at risk at 15:00 (6h of 8h), breached at 17:00.
    assert await timers.run_due(world.services, world.clock.now()) == 2
    seen = await finished_clocks(world.client, fiona)
    assert seen["retro"]["breachedAt"] == at(1, 17)
    assert seen["kept"]["breachedAt"] == at(1, 11)


REPORT = """query($from: DateTime!) { slaReport(from: $from, groupBy: [SLOT]) {
  rows { slot opened met breached } } }"""


async def test_the_report_reads_the_deadline_in_force_when_it_happened(world: World) -> None:
    await start(world, "P1")  # due Tuesday 11:00, breached then
    world.clock.set(datetime.fromisoformat(at(1, 11)))
    await timers.run_due(world.services, world.clock.now())
    world.clock.set(datetime.fromisoformat(at(1, 13)))
    await set_priority(world, "P3")
    world.clock.set(datetime.fromisoformat(at(1, 14)))
    fiona = world.people["fiona"]
    for name in ("kept", "restarted", "retro"):
        slot = await w.slot_named(world.client, fiona, name)
        assert (await w.claim(world.client, fiona, slot["id"]))["__typename"] == "SlotSuccess"
        done = await w.complete(world.client, fiona, slot["id"], {})
        assert done["__typename"] == "CompleteSuccess"
    answer = await gql(world.client, REPORT, {"from": at(1, 0)}, token=world.people["max"])
    rows = {r["slot"]: r for r in answer.ok()["slaReport"]["rows"]}
    # Done at 14:00 before every new deadline; the 11:00 breach stands for keep-elapsed and
    # restart (it happened under the deadline then in force), not for retroactive.
    assert {
        n: (r["met"], r["breached"]) for n, r in rows.items() if n in ("kept", "restarted", "retro")
    } == {
        "kept": (0, 1),
        "restarted": (0, 1),
        "retro": (1, 0),
    }


async def _breach_facts(world: World, run_id: str) -> dict[str, Any]:
    """Per slot: the breach on record, the due instant, the armed breach timers' keys (after
    the slot id) and how many ``clock.breached`` lines it has."""
    local = uuid.UUID(relay.from_global_id(run_id)[1])
    async with world.services.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT s.name, k.breached_at, k.due_at, "
            "(SELECT array_agg(split_part(t.key, ':', 2) || ':' || split_part(t.key, ':', 3) "
            "   || coalesce(':' || nullif(split_part(t.key, ':', 4), ''), '') ORDER BY t.key) "
            " FROM timer t WHERE t.slot = s.id AND t.kind = 'breach' AND t.status = 'armed') "
            " AS armed, "
            "(SELECT count(*) FROM audit_event a WHERE a.slot = s.id "
            " AND a.kind = 'clock.breached') AS lines "
            "FROM slot s JOIN sla_clock k ON k.slot = s.id WHERE s.run = $1",
            local,
        )
    return {r["name"]: dict(r) for r in rows}


async def test_a_recompute_racing_the_breach_it_moves_leaves_one_consistent_outcome(
    world: World, database_url: str
) -> None:
    """The priority is lowered (2h -> 8h) at 13:00 while a worker pass fires the 11:00
    breaches, on real connections. Runs R-1 and R-3 are held (a third connection locks them)
    so that their updates wait while the pass skips them, then go on; R-0 and R-2 are not
    held, so the pass breaches them first. Either order ends with the same breach on record,
    the same armed breach timers and one ``clock.breached`` line per breach (a breach on
    record whose timer had not fired yet fires at the next pass)."""
    cases = [f"R-{i}" for i in range(4)]
    runs = {case: await start(world, "P1", case) for case in cases}
    held = [uuid.UUID(relay.from_global_id(runs[c])[1]) for c in ("R-1", "R-3")]
    world.clock.set(datetime.fromisoformat(at(1, 13)))
    now = world.clock.now()
    locker = await asyncpg.connect(database_url)
    try:
        tx = locker.transaction()
        await tx.start()
        await locker.execute("SELECT 1 FROM run WHERE id = ANY($1::uuid[]) FOR UPDATE", held)
        updates = asyncio.gather(*(set_priority(world, "P3", c) for c in ("R-1", "R-3")))
        await lock_waits.until_waiting(database_url, 2)
        fired = await timers.run_due(world.services, now)  # skips the held runs
        await tx.rollback()
        await updates
    finally:
        await locker.close()
    assert fired == 12  # three at-risk timers and three breaches each
    # The held runs' 2-hour deadlines passed at 11:00 while in force: on record, their
    # breach timers (kept, and restarted's first generation) fire now, late.
    assert await timers.run_due(world.services, now) == 4
    for case in ("R-0", "R-2"):
        await set_priority(world, "P3", case)
    eleven, eight = datetime.fromisoformat(at(1, 11)), datetime.fromisoformat(at(1, 17))
    for case in cases:
        found = await _breach_facts(world, runs[case])
        kept, restarted, retro = found["kept"], found["restarted"], found["retro"]
        # Either order: the breach at 11:00 is on record once; keep-elapsed arms nothing
        # more, restart arms its new term (8h from 13:00: Wednesday 12:30).
        assert (kept["due_at"], kept["breached_at"], kept["armed"], kept["lines"]) == (
            eight, eleven, None, 1,
        )  # fmt: skip
        assert (restarted["breached_at"], restarted["armed"], restarted["lines"]) == (
            eleven, ["breach:finished:1"], 1,
        )  # fmt: skip
        # Retroactive: judged on 8h from 09:00: not breached, its new term armed; the line
        # of the breach it withdrew stays on the timeline when the pass came first.
        assert retro["lines"] == (1 if case in ("R-0", "R-2") else 0)
        assert retro["due_at"] == eight
        assert (retro["breached_at"], retro["armed"]) == (None, ["breach:finished:1"])
