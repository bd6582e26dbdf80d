"""Borrowed connections go back to the pool without asyncpg's shield task
(``store/common/borrowing.py``): every way of borrowing gives its connection back, usable as a
fresh one, a connection given back inside a transaction is rolled back first, and one with
nothing to reset goes straight back (the same session; the idle timer only above the floor)."""

from __future__ import annotations

import asyncio

import pytest

from taskflow.store.common import db

pytestmark = pytest.mark.anyio


async def test_each_way_of_borrowing_gives_the_one_connection_back(database_url: str) -> None:
    database = await db.Database.connect(database_url, min_size=1, max_size=1)
    try:
        for _ in range(3):
            # One connection: a borrow not given back would make the next one wait forever.
            for borrow in (database.connection, database.single, database.transaction):
                async with asyncio.timeout(5), borrow() as conn:
                    assert await conn.fetchval("SELECT 1") == 1
            async with asyncio.timeout(5), database.keyed() as conn:
                assert await conn.fetchval("SELECT 1") == 1
        assert database.pool.get_idle_size() == 1

        async def failing() -> None:
            async with database.transaction() as conn:
                await conn.execute("CREATE TABLE given_back (n int)")
                raise RuntimeError("the use case failed")

        with pytest.raises(RuntimeError):
            await failing()
        async with asyncio.timeout(5), database.connection() as conn:
            assert await conn.fetchval("SELECT to_regclass('given_back')") is None
    finally:
        await database.close()


async def test_a_connection_given_back_in_a_transaction_is_rolled_back(database_url: str) -> None:
    database = await db.Database.connect(database_url, min_size=1, max_size=1)
    try:
        async with database.connection() as conn:
            await conn.execute("BEGIN")
            await conn.execute("CREATE TABLE left_open (n int)")
        async with asyncio.timeout(5), database.connection() as conn:
            assert not conn.is_in_transaction()
            assert await conn.fetchval("SELECT to_regclass('left_open')") is None
    finally:
        await database.close()


async def test_a_clean_connection_goes_back_to_the_pool_as_it_was_lent(database_url: str) -> None:
    """A borrowed connection with nothing to reset goes straight back (no reset round trip,
    no idle timer while the pool is at its floor): the next borrower gets the same session."""
    database = await db.Database.connect(database_url, min_size=1, max_size=1)
    try:
        pids = set()
        for _ in range(5):
            async with database.single() as conn:
                pids.add(await conn.fetchval("SELECT pg_backend_pid()"))
        assert len(pids) == 1
        [holder] = database.pool._holders
        assert holder._inactive_callback is None
        assert database.pool.get_idle_size() == 1
    finally:
        await database.close()


async def test_connections_above_the_floor_still_close_when_idle(database_url: str) -> None:
    """The pool's idle timer is armed on a give-back while it holds more than its floor."""
    database = await db.Database.connect(database_url, min_size=1, max_size=3)
    try:
        all_borrowed = asyncio.Barrier(4)

        async def hold() -> None:
            async with database.single() as conn:
                await conn.fetchval("SELECT 1")
                await all_borrowed.wait()

        held = [asyncio.create_task(hold()) for _ in range(3)]
        await all_borrowed.wait()
        await asyncio.gather(*held)
        assert database.pool.get_size() == 3
        armed = [h for h in database.pool._holders if h._inactive_callback is not None]
        assert len(armed) >= 2
    finally:
        await database.close()
