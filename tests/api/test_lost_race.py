"""A mutation whose transaction PostgreSQL picks as a deadlock's victim is run again by itself:
the caller sees the one effect it asked for, not INTERNAL.

Another connection (an outsider to the lock order: a test can do what taskflow never does)
holds the slot's row, waits until the claim holds the run and waits for that slot, then asks
for the run: a real deadlock. The claim's backend waited first, so it finds the cycle and
gives way; its use case runs again once the other has finished.
"""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest

from taskflow.service.common import container
from tests.api import workflows as w

pytestmark = pytest.mark.anyio


async def _waiting_on_a_lock(conn: asyncpg.Connection, others: int) -> bool:
    found = await conn.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1 "
        "AND datname = current_database()",
        others,
    )
    return bool(found)


async def test_a_claim_that_loses_a_deadlock_is_retried_and_succeeds(
    services: container.Services, client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-1", w.TICKET)
    assert started["__typename"] == "StartRunSuccess"
    triage = await w.slot_named(client, people["tess"], "triage")
    # Straight to PostgreSQL (behind a pooler, the direct URL): a session of its own.
    outsider = await asyncpg.connect(services.db.listen_url or services.db.url)
    deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
    before = await outsider.fetchval(deadlocks)
    try:
        async with outsider.transaction():
            slot_row = await outsider.fetchrow(
                "SELECT id, run FROM slot WHERE name = 'triage' FOR UPDATE"
            )
            claim = asyncio.ensure_future(w.claim(client, people["tess"], triage["id"]))
            pid = await outsider.fetchval("SELECT pg_backend_pid()")
            for _ in range(200):
                if await _waiting_on_a_lock(outsider, pid):
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("the claim never waited for the slot")
            # The cycle: the claim holds the run and waits for the slot we hold.
            await outsider.execute("SELECT 1 FROM run WHERE id = $1 FOR UPDATE", slot_row["run"])
        answer = await claim
        for _ in range(50):  # backends report their counts within a second or so
            await outsider.execute("SELECT pg_stat_clear_snapshot()")
            after = await outsider.fetchval(deadlocks)
            if after > before:
                break
            await asyncio.sleep(0.1)
    finally:
        await outsider.close()
    assert after == before + 1  # PostgreSQL did see a deadlock
    assert answer["__typename"] == "SlotSuccess", answer
    assert answer["slot"]["holder"] == "tess"
    lines = await w.timeline(client, people["ada"], started["run"]["id"], ["slot.claimed"])
    assert len(lines) == 1
