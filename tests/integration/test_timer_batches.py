"""A worker's batch: runs busy elsewhere wait, a refused firing is postponed, firings chain.

Every timer here is the *resolved* state's timeout of a support-ticket run
(see ``tests/acceptance/test_workers.py``): firing it closes the run and writes
a ``timeout.fired`` line on its timeline.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.acceptance.test_workers import DIGEST, SEED

pytestmark = pytest.mark.anyio


async def seed(services: container.Services, n: int) -> list[str]:
    """``n`` runs parked in *resolved*, each with its timeout due a little before now."""
    async with services.db.transaction() as conn:
        await conn.execute(SEED, "B-", n, DIGEST, 0.0, -1.0, services.clock.now())
        return [str(r["id"]) for r in await conn.fetch("SELECT id FROM run ORDER BY id")]


async def timeline_kinds(services: container.Services, run_id: str) -> list[str]:
    async with services.db.connection() as conn:
        found = await conn.fetch(
            "SELECT kind FROM audit_event WHERE run = $1 ORDER BY id", uuid.UUID(run_id)
        )
    return [r["kind"] for r in found]


async def timer_of(services: container.Services, run_id: str) -> tuple[str, int, datetime]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT status, fired, due_at FROM timer WHERE run = $1", uuid.UUID(run_id)
        )
    return row["status"], row["fired"], row["due_at"]


async def test_a_run_busy_in_a_use_case_is_left_for_the_next_pass_and_the_rest_fire(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    runs = await seed(services, 5)
    busy = runs[2]
    now = frozen_clock.now()
    async with services.db.transaction() as conn:  # a use case holding the run's lock
        await conn.execute("SELECT 1 FROM run WHERE id = $1 FOR UPDATE", uuid.UUID(busy))
        assert await timers.run_due(services, now) == 4
    assert (await timer_of(services, busy))[:2] == ("armed", 0)
    assert "timeout.fired" not in await timeline_kinds(services, busy)
    assert await timers.run_due(services, now) == 1
    assert (await timer_of(services, busy))[:2] == ("fired", 1)
    for run_id in runs:
        assert (await timeline_kinds(services, run_id)).count("timeout.fired") == 1


async def test_a_firing_the_database_refuses_is_postponed_and_the_rest_of_its_batch_fires(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    runs = await seed(services, 5)
    refused = runs[1]
    async with services.db.connection() as conn:
        # Not a stand-in for our code: the database itself refusing one run's timeline lines.
        await conn.execute(
            f"""
            CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.run = '{refused}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse BEFORE INSERT ON audit_event
                FOR EACH ROW EXECUTE FUNCTION refuse();
            """
        )
    now = frozen_clock.now()
    assert await timers.run_due(services, now) == 4
    status, fired, due = await timer_of(services, refused)
    assert (status, fired) == ("armed", 0)  # tried again after the first backoff
    assert timedelta(seconds=15) <= due - now <= timedelta(seconds=30)
    assert await timeline_kinds(services, refused) == []
    for run_id in runs:
        if run_id != refused:
            assert (await timer_of(services, run_id))[:2] == ("fired", 1)
            assert "run.completed" in await timeline_kinds(services, run_id)
    async with services.db.connection() as conn:
        state = await conn.fetchval("SELECT state FROM run WHERE id = $1", uuid.UUID(refused))
    assert state == "resolved"


async def test_a_later_firing_in_a_batch_sees_what_an_earlier_one_did_to_its_run(
    services: container.Services, frozen_clock: clock.FrozenClock
) -> None:
    [run_id] = await seed(services, 1)
    now = frozen_clock.now()
    async with services.db.connection() as conn:
        # A second timeout of the same visit, due after the first: once the first has closed
        # the run, the second has nothing left to act on.
        await conn.execute(
            "INSERT INTO timer (key, run, kind, part, due_at, status, fired, updated_at) "
            "VALUES ($1, $2, 'timeout', '1', $3, 'armed', 0, $3)",
            f"{run_id}:1:timeout:1",
            uuid.UUID(run_id),
            now - timedelta(milliseconds=1),
        )
    assert await timers.run_due(services, now) == 1
    async with services.db.connection() as conn:
        rows = {
            r["part"]: (r["status"], r["fired"])
            for r in await conn.fetch("SELECT part, status, fired FROM timer")
        }
    assert rows == {"0": ("fired", 1), "1": ("cancelled", 0)}
    assert (await timeline_kinds(services, run_id)).count("timeout.fired") == 1
