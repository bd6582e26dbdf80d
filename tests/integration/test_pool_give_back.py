"""Borrowed connections go back to the pool without asyncpg's shield task (``store/common/db.py``):
every way of borrowing gives its connection back, usable as a fresh one, and a
connection given back inside a transaction is rolled back first."""

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
