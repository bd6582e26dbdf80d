"""The pool settings reach the pool, and a statement cache of 0 keeps no prepared statement
on a server connection (what a pooler in transaction mode needs; docs/operations.md)."""

from __future__ import annotations

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
