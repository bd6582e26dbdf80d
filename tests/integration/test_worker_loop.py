"""The in-process worker (``taskflow serve --with-worker``): it fires on the services' clock."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from taskflow import clock
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.worker import loop
from tests.conftest import EXAMPLE_PRINCIPALS

pytestmark = pytest.mark.anyio

#: Both schedulers (``TASKFLOW_SCHEDULER``) must fire the same timers at the same instants.
SCHEDULERS = pytest.mark.parametrize("scheduler", ["listen", "poll"])


async def breaches(services: container.Services) -> int:
    async with services.db.connection() as conn:
        return int(
            await conn.fetchval("SELECT count(*) FROM audit_event WHERE kind = 'clock.breached'")
        )


@SCHEDULERS
async def test_a_running_worker_fires_when_its_clock_reaches_the_due_instant(
    services: container.Services, frozen_clock: clock.FrozenClock, scheduler: str
) -> None:
    await principal_service.load(services, json.loads(EXAMPLE_PRINCIPALS.read_text()))
    app = await principal_service.get(services, "app")
    assert app is not None
    async with loop.running(services, poll=0.05, scheduler=scheduler) as worker:
        await run_service.start_run(
            services,
            app,
            workflow="support-ticket",
            subject_type="ticket",
            external_id="T-9",
            attributes={"reference": "T-9", "title": "x", "priority": "P3", "team": "t"},
            idempotency_key=None,
        )
        async with asyncio.timeout(5):
            await worker.passes_done(3)  # several passes: nothing is due on the frozen clock yet
        assert await breaches(services) == 0
        frozen_clock.advance(timedelta(minutes=30))  # triage's 30 minutes are up
        async with asyncio.timeout(5):
            while not await breaches(services):
                await worker.next_pass()
        assert await breaches(services) == 1
        assert worker.fired == 3  # at risk, the breach and the reminder on breach


async def test_a_notify_wakes_a_sleeping_worker_long_before_its_next_poll(
    services: container.Services, database_url: str
) -> None:
    from tests.acceptance.test_workers import DIGEST, SEED

    async with loop.running(services) as worker:
        worker.poll = 60.0  # only a NOTIFY can wake it within this test
        async with asyncio.timeout(5):
            await worker.passes_done(1)  # its first (empty) pass: then it sleeps
        async with services.db.transaction() as conn:
            await conn.execute(SEED, "N-", 5, DIGEST, 0.0, -1.0, services.clock.now())
            await conn.execute("SELECT pg_notify('taskflow_timers', '')")
        async with asyncio.timeout(20):  # a third of its poll: a loaded machine's pass fits
            await worker.until(lambda: worker.fired >= 5)
        assert worker.fired == 5


@SCHEDULERS
async def test_a_sleeping_worker_wakes_when_the_nearest_timer_falls_due_without_a_notify(
    services: container.Services, frozen_clock: clock.FrozenClock, scheduler: str
) -> None:
    from tests.acceptance.test_workers import DIGEST, SEED

    async with services.db.transaction() as conn:
        await conn.execute(SEED, "S-", 3, DIGEST, 0.0, 0.0, services.clock.now())
        # Due shortly after the worker's clock reads now; armed without a NOTIFY.
        await conn.execute(
            "UPDATE timer SET due_at = $1", frozen_clock.now() + timedelta(milliseconds=300)
        )
    async with loop.running(services, scheduler=scheduler) as worker:
        worker.poll = 60.0  # a poll cannot be what fires them within this test
        async with asyncio.timeout(5):
            await worker.passes_done(1)  # its first pass: nothing due yet; it sleeps until the due
        assert worker.fired == 0
        frozen_clock.advance(timedelta(seconds=1))
        async with asyncio.timeout(20):  # a third of its poll: a loaded machine's pass fits
            await worker.until(lambda: worker.fired >= 3)
        assert worker.fired == 3


async def listening_sessions(services: container.Services) -> int:
    async with services.db.connection() as conn:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        )


async def test_a_polling_worker_holds_no_listen_connection_and_fires_by_its_next_poll(
    services: container.Services,
) -> None:
    from tests.acceptance.test_workers import DIGEST, SEED

    async with loop.running(services, scheduler="poll", poll=0.2) as worker:
        async with asyncio.timeout(5):
            await worker.passes_done(1)  # its first (empty) pass: then it sleeps a poll
        assert await listening_sessions(services) == 0
        async with services.db.transaction() as conn:
            # Due now, armed after its pass: only the next poll can find them.
            await conn.execute(SEED, "P-", 4, DIGEST, 0.0, -1.0, services.clock.now())
        async with asyncio.timeout(20):
            await worker.until(lambda: worker.fired >= 4)
        assert worker.fired == 4
        assert worker.poll == 0.2  # not capped at a second: polling alone is the operator's
    async with loop.running(services, scheduler="listen") as worker:
        async with asyncio.timeout(5):
            await worker.passes_done(1)
        # Both lanes' channels (timers, webhooks) on one connection each.
        assert await listening_sessions(services) >= 1
