"""The one retry helper (``service/common/retry.py``): a real deadlock is run again, then BUSY.

The deadlock is PostgreSQL's own: two connections take two rows in opposite
orders. The work under test is made the victim (a shorter ``deadlock_timeout``:
the backend that finds the cycle gives way), rolls back whole, and its second
run has the one effect it asked for.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from taskflow import errors
from taskflow.service.common import container, retry

pytestmark = pytest.mark.anyio


async def test_a_transaction_that_loses_a_deadlock_runs_again_with_one_effect(
    services: container.Services,
) -> None:
    async with services.db.connection() as conn:
        await conn.execute("CREATE TABLE probe (id int PRIMARY KEY, n int NOT NULL)")
        await conn.execute("INSERT INTO probe VALUES (1, 0), (2, 0)")
    both_hold_one = asyncio.Barrier(2)
    attempts = 0

    async def work() -> str:
        nonlocal attempts
        attempts += 1
        async with services.db.transaction() as conn:
            await conn.execute("SET LOCAL deadlock_timeout = '20ms'")
            await conn.execute("UPDATE probe SET n = n + 1 WHERE id = 1")
            if attempts == 1:
                await both_hold_one.wait()
            await conn.execute("UPDATE probe SET n = n + 1 WHERE id = 2")
        return "done"

    async def opponent() -> None:
        async with services.db.transaction() as conn:
            await conn.execute("UPDATE probe SET n = n + 10 WHERE id = 2")
            await both_hold_one.wait()
            await conn.execute("UPDATE probe SET n = n + 10 WHERE id = 1")

    done, _ = await asyncio.gather(retry.run(services, "probe", work), opponent())
    assert done == "done"
    assert attempts == 2
    async with services.db.connection() as conn:
        rows = await conn.fetch("SELECT id, n FROM probe ORDER BY id")
    assert [(r["id"], r["n"]) for r in rows] == [(1, 11), (2, 11)]


class Losing:
    """Work whose every attempt fails with the PostgreSQL error ``errcode``; counts attempts."""

    def __init__(self, services: container.Services, errcode: str) -> None:
        self.services, self.errcode, self.attempts = services, errcode, 0

    async def __call__(self) -> None:
        self.attempts += 1
        async with self.services.db.transaction() as conn:
            await conn.execute(
                f"DO $$ BEGIN RAISE EXCEPTION 'lost' USING ERRCODE = '{self.errcode}'; END $$"
            )


async def test_after_every_attempt_lost_the_answer_is_busy(services: container.Services) -> None:
    # PostgreSQL reports a serialization failure, as a concurrent writer would cause.
    work = Losing(services, "serialization_failure")
    with pytest.raises(errors.Busy) as refused:
        await retry.run(services, "update the probe", work)
    assert work.attempts == retry.ATTEMPTS
    assert refused.value.code == "BUSY"
    assert refused.value.facts["retry_after_seconds"] == retry.RETRY_AFTER_SECONDS
    assert "update the probe" in refused.value.message


async def test_inside_an_enclosing_transaction_the_owner_retries(
    services: container.Services,
) -> None:
    work = Losing(services, "deadlock_detected")

    async def owner() -> None:
        async with services.db.transaction() as conn:
            inside = dataclasses.replace(services, db=services.db.bound(conn))
            await retry.run(inside, "inner", work)

    with pytest.raises(errors.Busy):
        await retry.run(services, "outer", owner)
    assert work.attempts == retry.ATTEMPTS  # once per run of the owner, not ATTEMPTS squared
