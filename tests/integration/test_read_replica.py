"""Reads that may lag go to a streaming replica (``TASKFLOW_DATABASE_READ_URL``): a run's
history comes from the replica, and while its replay is paused (``pg_wal_replay_pause``) it
does not show what the primary just wrote; the staff's inbox and claims read the primary and
show it at once. A replica beyond the lag bound is skipped, counted in the metrics and listed
to admins as ``REPLICA_LAGGING`` (tests/api/test_replica_lagging.py does the same with a told
lag, without a replica). Runs only beside a real replica
(``bash .ci/with-postgres bash .ci/with-replica .venv/bin/pytest <this file>``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import asyncpg
import pytest

from taskflow.config import config
from taskflow.core.access import principals as core_principals
from taskflow.core.operate.attention import Reason
from taskflow.core.slots import filters
from taskflow.service.common import container
from taskflow.service.history import history
from taskflow.service.operate import attention
from taskflow.service.reports import metrics, replica_metrics
from taskflow.service.slots import views
from taskflow.store.common import db
from tests.conftest import connect_database
from tests.integration.test_pool_settings import BUYER, claim_an_upload

REPLICA_URL = os.environ.get("TASKFLOW_TEST_REPLICA_URL") or None

ADMIN = core_principals.build({"id": "ada", "display_name": "Ada", "roles": ["admin"]})

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(REPLICA_URL is None, reason="no replica (.ci/with-replica)"),
]


def fallbacks_counted() -> float:
    """``taskflow_replica_fallbacks_total{why="lagging"}`` in this process."""
    found = metrics.REGISTRY.get_sample_value(
        "taskflow_replica_fallbacks_total", {"why": "lagging"}
    )
    return found or 0.0


async def caught_up(pg_admin_url: str) -> None:
    """Wait until the replica has replayed everything the primary has written so far."""
    assert REPLICA_URL is not None
    primary, replica = await asyncpg.connect(pg_admin_url), await asyncpg.connect(REPLICA_URL)
    try:
        target = await primary.fetchval("SELECT pg_current_wal_lsn()")
        for _ in range(400):
            if await replica.fetchval("SELECT pg_last_wal_replay_lsn() >= $1", target):
                return
            await asyncio.sleep(0.025)
        raise AssertionError("the replica did not catch up in 10 s")
    finally:
        await primary.close()
        await replica.close()


async def on_replica(statement: str) -> None:
    assert REPLICA_URL is not None
    conn = await asyncpg.connect(REPLICA_URL)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def replicated(
    database_url: str, pg_admin_url: str, settings: config.Settings, frozen_clock, max_lag: float
) -> AsyncIterator[container.Services]:
    """The test's services with their reads that may lag on the replica (bound ``max_lag``)."""
    assert REPLICA_URL is not None
    await caught_up(pg_admin_url)  # the test's database exists on the replica
    name = database_url.partition("?")[0].rsplit("/", 1)[1]
    database = await connect_database(
        database_url, read_url=db.with_database(REPLICA_URL, name), read_max_lag=max_lag
    )
    try:
        replica_metrics.watch(database)
        yield container.build(database, settings, frozen_clock)
    finally:
        await database.close()


async def paused_after_claim(services: container.Services, pg_admin_url: str) -> str:
    """Pause the replica's replay, then start a run and claim its slot on the primary: the
    run's id."""
    await caught_up(pg_admin_url)
    await on_replica("SELECT pg_wal_replay_pause()")
    await claim_an_upload(services)
    async with services.db.transaction() as conn:
        return str(await conn.fetchval("SELECT id FROM run"))


@pytest.fixture
async def lagging(
    database_url: str, pg_admin_url: str, settings: config.Settings, frozen_clock
) -> AsyncIterator[container.Services]:
    async for services in replicated(database_url, pg_admin_url, settings, frozen_clock, 3600):
        try:
            yield services
        finally:
            await on_replica("SELECT pg_wal_replay_resume()")


async def test_history_reads_the_replica_inbox_and_claims_the_primary(
    lagging: container.Services, pg_admin_url: str
) -> None:
    run_id = await paused_after_claim(lagging, pg_admin_url)
    buyer = core_principals.build(BUYER)

    # The buyer's own claim shows in their inbox at once: it reads the primary.
    rows, _ = await views.inbox(
        lagging, buyer, filters.SlotFilter(workflow="vendor-onboarding"), first=10, after=None
    )
    assert [row.slot.holder for row in rows] == [BUYER["id"]]
    # The run's history reads the paused replica: the run is not there yet.
    assert await history.run_visits(lagging, run_id, effective=False) == []
    assert lagging.db.replica is not None
    assert lagging.db.replica.fallbacks == 0

    await on_replica("SELECT pg_wal_replay_resume()")
    await caught_up(pg_admin_url)
    assert [v.state for v in await history.run_visits(lagging, run_id, effective=False)]


async def test_a_replica_beyond_the_bound_is_skipped(
    database_url: str, pg_admin_url: str, settings: config.Settings, frozen_clock
) -> None:
    async for services in replicated(database_url, pg_admin_url, settings, frozen_clock, 0.0):
        try:
            run_id = await paused_after_claim(services, pg_admin_url)
            fell_back = fallbacks_counted()
            # Behind at all (bound 0): the history reads the primary and sees the run.
            assert await history.run_visits(services, run_id, effective=False) != []
            assert services.db.replica is not None
            assert services.db.replica.fallbacks == 1
            assert fallbacks_counted() == fell_back + 1
            assert (metrics.REGISTRY.get_sample_value("taskflow_replica_lag_seconds") or 0) > 0
            # Admins see it in needs attention while it lags.
            items, _ = await attention.listing(
                services, ADMIN, reasons=None, workflow=None, after=None, limit=10
            )
            assert [(i.reason, i.run_id) for i in items] == [(Reason.REPLICA_LAGGING, None)]
        finally:
            await on_replica("SELECT pg_wal_replay_resume()")
