"""A timer whose firing keeps failing: backoff with jitter, parked dead, seen and mended in GraphQL.

The failure is real: the ``escalating-to-owner`` workflow hands a breached
approval to the principal its subject names as owner, and an owner id longer
than a slot's holder column makes PostgreSQL refuse that firing every time.
Time moves only with the frozen clock; the worker's pass is stepped with
``run_due``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.clocks import timer_admin, timers
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from taskflow.worker import loop
from tests.conftest import asgi_client, gql
from tests.integration import starting

pytestmark = pytest.mark.anyio

#: Tuesday 10:00 in London: the two business hours of the approval run out at 12:00.
START = datetime(2026, 12, 1, 10, tzinfo=UTC)
BREACH = datetime(2026, 12, 1, 12, tzinfo=UTC)
BROKEN_OWNER = "o" * 250  # longer than slot.holder (200): the database refuses the hand-over

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"
DEAD_TIMERS = (OPERATIONS / "dead_timers.graphql").read_text()
RETRY = (OPERATIONS / "retry_timer.graphql").read_text()
DISCARD = (OPERATIONS / "discard_timer.graphql").read_text()
RUN_TIMERS = """query($id: ID!) { run(id: $id) { timers { id state attempts lastError } } }"""


@pytest.fixture
async def client(sla_services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(sla_services) as http:
        yield http


def token(services: container.Services, who: str) -> str:
    return services.staff_tokens.mint(who, services.clock.now())


start = starting.start_owned


async def escalation(services: container.Services, run_id: str) -> dict[str, Any]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT id, status, attempts, due_at, planned_at, last_error, failed_at, fired "
            "FROM timer WHERE run = $1 AND kind = 'reminder' AND part = '0'",
            uuid.UUID(run_id),
        )
    assert row is not None
    return dict(row)


async def timeline(services: container.Services, run_id: str) -> list[tuple[str, str | None]]:
    async with services.db.connection() as conn:
        found = await conn.fetch(
            "SELECT kind, actor, reason FROM audit_event WHERE run = $1 ORDER BY id",
            uuid.UUID(run_id),
        )
    return [(r["kind"], r["actor"]) for r in found]


def step(attempt: int) -> float:
    """The backoff's exponential step after the ``attempt``-th failure (defaults: 30 s, 1 h)."""
    return min(3600.0, 30.0 * 2 ** (attempt - 1))


async def test_a_failing_firing_backs_off_then_is_parked_dead_and_seen_and_retried(
    sla_services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    services = sla_services
    frozen_clock.set(START)
    run_id = await start(services, "P-1", BROKEN_OWNER)

    frozen_clock.set(BREACH)  # the breach is recorded; the escalation on it fails
    assert await timers.run_due(services, frozen_clock.now()) == 2  # at risk, then breached
    timer = await escalation(services, run_id)
    assert (timer["status"], timer["attempts"], timer["planned_at"]) == ("armed", 1, BREACH)
    assert "StringDataRightTruncation" in timer["last_error"]
    assert timer["failed_at"] == BREACH

    # Each failure waits longer: between half and all of 30 s, 60 s, 120 s, ... (jitter).
    spacing = []
    for attempt in range(2, 9):
        due = timer["due_at"]
        frozen_clock.set(due - timedelta(seconds=1))
        assert await timers.run_due(services, frozen_clock.now()) == 0
        assert (await escalation(services, run_id))["attempts"] == attempt - 1  # not yet
        frozen_clock.set(due)
        assert await timers.run_due(services, frozen_clock.now()) == 0
        before, timer = timer, await escalation(services, run_id)
        assert timer["attempts"] == attempt
        spacing.append((due - before["failed_at"]).total_seconds())
    for attempt, waited in enumerate(spacing, start=1):
        assert step(attempt) / 2 <= waited <= step(attempt), (attempt, spacing)
    assert timer["status"] == "dead"
    assert ("timer.dead", None) in await timeline(services, run_id)

    # Dead stays dead: later passes leave it, and a use case on its slot does not re-arm it.
    frozen_clock.advance(timedelta(days=2))
    assert await timers.run_due(services, frozen_clock.now()) == 0
    fiona = await principal_service.get(services, "fiona")
    assert fiona is not None
    async with services.db.connection() as conn:
        slot_id = str(await conn.fetchval("SELECT id FROM slot WHERE run = $1", uuid.UUID(run_id)))
    await slot_service.claim(services, fiona, slot_id, None)
    assert (await escalation(services, run_id))["status"] == "dead"

    # Admins and leads see it in GraphQL, with why.
    ada, fiona_token = token(services, "ada"), token(services, "fiona")
    dead = (await gql(client, DEAD_TIMERS, token=ada)).ok()["timers"]
    assert dead["totalCount"] == 1
    (node,) = [e["node"] for e in dead["edges"]]
    assert node["state"] == "DEAD"
    assert (node["kind"], node["part"], node["attempts"], node["maxAttempts"]) == (
        "reminder",
        "0",
        8,
        8,
    )
    assert node["lastError"].startswith("StringDataRightTruncationError: ")
    assert node["plannedAt"] == BREACH.isoformat()
    assert node["runId"] == relay.to_global_id("Run", run_id)
    run_gid = relay.to_global_id("Run", run_id)
    seen = (await gql(client, RUN_TIMERS, {"id": run_gid}, token=ada)).ok()["run"]["timers"]
    assert [t["state"] for t in seen if t["id"] == node["id"]] == ["DEAD"]
    assert (await gql(client, RUN_TIMERS, {"id": run_gid}, token=fiona_token)).ok()["run"][
        "timers"
    ] is None
    refused = await gql(client, DEAD_TIMERS, token=fiona_token)
    assert refused.error_codes == ["FORBIDDEN"]
    # A lead of another workflow (Olga: vendor-onboarding) neither sees nor mends it.
    olga = token(services, "olga")
    theirs = (await gql(client, DEAD_TIMERS, token=olga)).ok()["timers"]
    assert (theirs["totalCount"], theirs["edges"]) == (0, [])
    hidden = await gql(
        client, "query($id: ID!) { node(id: $id) { id } }", {"id": node["id"]}, token=olga
    )
    assert hidden.ok()["node"] is None
    not_theirs = (await gql(client, RETRY, {"timerId": node["id"]}, token=olga)).ok()
    assert not_theirs["retryTimer"]["code"] == "NOT_FOUND"

    # Only admins and leads retry; only a dead timer can be retried.
    no = await gql(client, RETRY, {"timerId": node["id"]}, token=fiona_token)
    assert no.ok()["retryTimer"]["code"] == "FORBIDDEN"
    retried = (await gql(client, RETRY, {"timerId": node["id"]}, token=ada)).ok()
    assert retried["retryTimer"]["__typename"] == "TimerSuccess"
    assert retried["retryTimer"]["timer"]["state"] == "ARMED"
    assert retried["retryTimer"]["timer"]["attempts"] == 0
    assert retried["retryTimer"]["timer"]["dueAt"] == frozen_clock.now().isoformat()
    again = (await gql(client, RETRY, {"timerId": node["id"]}, token=ada)).ok()
    assert again["retryTimer"]["__typename"] == "TimerNotDead"
    assert again["retryTimer"]["state"] == "ARMED"
    assert ("timer.retried", "ada") in await timeline(services, run_id)

    # The owner is still broken: the retry fails once more, and backs off afresh.
    assert await timers.run_due(services, frozen_clock.now()) == 0
    timer = await escalation(services, run_id)
    assert (timer["status"], timer["attempts"]) == ("armed", 1)

    # Mend the subject: the next attempt fires, once, and its failures are forgotten.
    app = await principal_service.get(services, "app")
    assert app is not None
    await run_service.update_subject(
        services, app, subject_type="request", external_id="P-1", attributes={"owner": "leah"}
    )
    assert (await escalation(services, run_id))["due_at"] == timer["due_at"]  # backoff kept
    frozen_clock.set(timer["due_at"])
    assert await timers.run_due(services, frozen_clock.now()) == 1
    timer = await escalation(services, run_id)
    assert (timer["status"], timer["fired"], timer["attempts"]) == ("fired", 1, 0)
    async with services.db.connection() as conn:
        holder = await conn.fetchval("SELECT holder FROM slot WHERE id = $1", uuid.UUID(slot_id))
    assert holder == "leah"
    assert [k for k, _ in await timeline(services, run_id)].count("clock.breached") == 1


async def test_an_admin_discards_a_dead_timer_with_a_reason_on_the_timeline(
    sla_services: container.Services, frozen_clock: clock.FrozenClock, client: httpx.AsyncClient
) -> None:
    services = sla_services
    services.settings = dataclasses.replace(services.settings, timer_max_attempts=2)
    frozen_clock.set(START)
    run_id = await start(services, "P-2", BROKEN_OWNER)
    frozen_clock.set(BREACH)
    assert await timers.run_due(services, frozen_clock.now()) == 2  # at risk, breach: no escalation
    frozen_clock.set((await escalation(services, run_id))["due_at"])
    assert await timers.run_due(services, frozen_clock.now()) == 0
    timer = await escalation(services, run_id)
    assert (timer["status"], timer["attempts"]) == ("dead", 2)
    timer_gid = relay.to_global_id("Timer", str(timer["id"]))

    ada = token(services, "ada")
    blank = await gql(client, DISCARD, {"timerId": timer_gid, "reason": " "}, token=ada)
    assert blank.ok()["discardTimer"]["field"] == "reason"
    missing = relay.to_global_id("Timer", "999999")
    gone = await gql(client, DISCARD, {"timerId": missing, "reason": "x"}, token=ada)
    assert gone.ok()["discardTimer"]["code"] == "NOT_FOUND"
    reason = "the owner left; handled by hand"
    done = await gql(client, DISCARD, {"timerId": timer_gid, "reason": reason}, token=ada)
    assert done.ok()["discardTimer"]["timer"] == {
        "id": timer_gid,
        "state": "DISCARDED",
        "attempts": 2,
    }
    twice = await gql(client, DISCARD, {"timerId": timer_gid, "reason": reason}, token=ada)
    assert twice.ok()["discardTimer"]["state"] == "DISCARDED"

    async with services.db.connection() as conn:
        line = await conn.fetchrow(
            "SELECT actor, reason, details FROM audit_event WHERE run = $1 "
            "AND kind = 'timer.discarded'",
            uuid.UUID(run_id),
        )
    assert (line["actor"], line["reason"]) == ("ada", reason)
    assert "StringDataRightTruncation" in line["details"]["error"]
    frozen_clock.advance(timedelta(days=3))
    assert await timers.run_due(services, frozen_clock.now()) == 0
    assert (await escalation(services, run_id))["status"] == "discarded"
    listed = await gql(client, DEAD_TIMERS, token=ada)
    assert listed.ok()["timers"]["totalCount"] == 0


async def test_a_running_worker_backs_off_parks_the_timer_dead_and_fires_a_retry(
    sla_services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    """The in-process worker loop on the frozen clock: each attempt when its backoff is up."""
    services = sla_services
    services.settings = dataclasses.replace(services.settings, timer_max_attempts=3)
    frozen_clock.set(START)
    run_id = await start(services, "P-3", BROKEN_OWNER)

    async def attempts_reach(n: int) -> dict[str, Any]:
        async with asyncio.timeout(5):
            while (timer := await escalation(services, run_id))["attempts"] < n:
                await worker.next_pass()
        return timer

    async with loop.running(services, poll=0.02) as worker:
        frozen_clock.set(BREACH)
        timer = await attempts_reach(1)
        async with asyncio.timeout(5):  # many passes: no attempt before the backoff is up
            await worker.passes_done(worker.passes + 5)
        assert (await escalation(services, run_id))["attempts"] == 1
        frozen_clock.set(timer["due_at"])
        timer = await attempts_reach(2)
        frozen_clock.set(timer["due_at"])
        timer = await attempts_reach(3)
        assert timer["status"] == "dead"
        frozen_clock.advance(timedelta(days=1))
        async with asyncio.timeout(5):
            await worker.passes_done(worker.passes + 5)
        assert (await escalation(services, run_id))["status"] == "dead"

        ada = await principal_service.get(services, "ada")
        assert ada is not None
        await timer_admin.retry(services, ada, timer["id"])
        await attempts_reach(1)  # the worker took the retried timer at once (and it failed)
    assert [k for k, _ in await timeline(services, run_id)].count("timer.dead") == 1
