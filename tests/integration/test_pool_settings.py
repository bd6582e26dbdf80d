"""The pool settings reach the pool, and a statement cache of 0 keeps no prepared statement
on a server connection (what a pooler in transaction mode needs; docs/operations.md)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.core.access import principals as core_principals
from taskflow.core.slots import filters
from taskflow.service.access import principals
from taskflow.service.common import container
from taskflow.service.runs import runs
from taskflow.service.slots import slots
from taskflow.store.common import db

pytestmark = pytest.mark.anyio

BUYER = {"id": "buyer", "display_name": "Buyer", "roles": ["procurement"]}


async def claim_an_upload(services: container.Services) -> str:
    """Start a vendor run and take its upload slot by claim-next (its statement calls the
    function claim_plain, whose statements PL/pgSQL prepares on the server itself)."""
    await principals.load(services, [BUYER])
    app = core_principals.build(
        {
            "id": "app",
            "display_name": "App",
            "roles": ["integration"],
            "powers": [{"power": "integration"}],
        }
    )
    await runs.start_run(
        services,
        app,
        workflow="vendor-onboarding",
        subject_type="vendor",
        external_id="V-POOL",
        attributes={
            "vendor_number": "V-POOL",
            "legal_name": "Pool Ltd",
            "vat_number": "GB123456789",
            "contact_email": "v@pool.example",
            "handles_personal_data": False,
            "required_documents": ["insurance"],
        },
        idempotency_key=None,
    )
    slot = await slots.claim_next(
        services,
        core_principals.build(BUYER),
        filters.SlotFilter(workflow="vendor-onboarding"),
    )
    return slot.holder or ""


async def prepared_statements(services: container.Services) -> int:
    """Named prepared statements held on the main pool's connection."""
    async with services.db.pool.acquire() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM pg_prepared_statements"))


async def test_without_a_statement_cache_no_prepared_statement_stays_on_the_server(
    database_url: str, settings: config.Settings
) -> None:
    behind_a_pooler = replace(settings, db_pool_min=1, db_pool_max=1, db_statement_cache_size=0)
    async with runtime.services(behind_a_pooler, database_url, apply_migrations=False) as services:
        assert (services.db.pool.get_min_size(), services.db.pool.get_max_size()) == (1, 1)
        assert await claim_an_upload(services) == "buyer"
        assert await prepared_statements(services) == 0
        # A worker's LISTEN connection, outside the pools, follows the same setting.
        listener = await services.db.dedicated()
        try:
            await listener.add_listener("timers", lambda *_: None)
            assert await listener.fetchval("SELECT count(*) FROM pg_prepared_statements") == 0
        finally:
            await listener.close()


async def test_by_default_statements_are_prepared_once_and_kept(
    database_url: str, settings: config.Settings
) -> None:
    direct = replace(settings, db_pool_min=1, db_pool_max=1)
    async with runtime.services(direct, database_url, apply_migrations=False) as services:
        assert services.db.pool.get_max_size() == 1
        assert await claim_an_upload(services) == "buyer"
        assert await prepared_statements(services) > 0


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


async def test_a_connection_left_in_a_transaction_is_rolled_back_before_its_next_borrow(
    database_url: str,
) -> None:
    database = await db.Database.connect(database_url, min_size=1, max_size=1)
    try:
        async with database.single() as conn:
            await conn.execute("BEGIN")
            await conn.execute("CREATE TEMP TABLE left_open (n int)")
        async with database.single() as conn:
            assert not conn.is_in_transaction()
            assert await conn.fetchval("SELECT to_regclass('pg_temp.left_open')") is None
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
