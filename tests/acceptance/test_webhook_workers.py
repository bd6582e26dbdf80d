"""Real ``taskflow worker`` processes deliver webhooks: a worker SIGKILLed mid-delivery loses
nothing (at-least-once): what it held is rolled back and sent by another worker.

Events come the real way: timeline lines inserted into ``audit_event`` fire the outbox
trigger, which queues a delivery per event for the enabled endpoint. The receiver is
uvicorn on loopback (tests/webhook_receiver.py), answering slowly so that the worker is
killed with requests in flight.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from taskflow.service.delivery import webhooks
from tests.acceptance.conftest import TASKFLOW, spawn, stop, wait_until, worker_env
from tests.webhook_receiver import Receiver

EVENTS = 200
SECRET = webhooks.new_secret()

SEED = """
WITH subjects AS (
    INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
    SELECT gen_random_uuid(), 'ticket', 'W-' || g, '{}'::jsonb, 1, $2, $2
    FROM generate_series(1, $1) g
    RETURNING id
), runs AS (
    INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                     visit, started_at, state_entered_at, updated_at, version)
    SELECT gen_random_uuid(), 'support-ticket', 1, 'x', id, 'triage', 'active', 1,
           $2, $2, $2, 1
    FROM subjects
    RETURNING id
)
INSERT INTO audit_event (run, kind, actor, details, at)
SELECT id, 'run.started', 'helpdesk', '{}'::jsonb, $2 FROM runs
"""


def sql(url: str, statement: str, *args: Any) -> list[Any]:
    async def go() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(statement, *args))
        finally:
            await conn.close()

    return asyncio.run(go())


def endpoint(url: str, receiver_url: str, secret: str) -> None:
    """An enabled endpoint for every event, owned by an admin (deliveries check the
    owner at send time: it must exist and may receive every workflow)."""
    sql(
        url,
        "WITH owner AS (INSERT INTO principal (id, display_name, roles, groups) "
        "VALUES ('ada', 'Ada Admin', ARRAY['admin'], '{}')) "
        "INSERT INTO webhook_endpoint (id, url, enabled, secret, created_by) "
        "VALUES ($1, $2, true, $3, 'ada')",
        uuid.uuid4(),
        receiver_url,
        secret,
    )


def delivered(url: str) -> int:
    rows = sql(url, "SELECT count(*) FROM webhook_delivery WHERE status = 'delivered'")
    return int(rows[0][0])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(secrets=[SECRET], delay=0.3).start()
    try:
        yield found
    finally:
        found.stop()


def test_a_worker_killed_mid_delivery_loses_nothing(
    database_url: str, receiver: Receiver, tmp_path: Path
) -> None:
    endpoint(database_url, receiver.url, SECRET)
    sql(database_url, SEED, EVENTS, datetime.now(UTC))
    env = worker_env(
        database_url,
        tmp_path,
        TASKFLOW_WEBHOOK_ALLOW_PRIVATE="true",
        TASKFLOW_WEBHOOK_TIMEOUT="2",
        TASKFLOW_WEBHOOK_CONCURRENCY="20",
    )
    processes: list[subprocess.Popen[str]] = []

    def start(name: str) -> subprocess.Popen[str]:
        log = tmp_path / f"{name}.log"
        process = spawn([*TASKFLOW, "worker"], env, log)
        processes.append(process)
        wait_until(lambda: "worker started" in log.read_text(), 30, f"{name} to start")
        return process

    try:
        victim = start("victim")
        # Killed with a batch in flight: some were sent (the receiver has them), none recorded.
        wait_until(lambda: len(receiver.received) >= 30, 60, "the first deliveries")
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        # Some reached the receiver but were never recorded: the kill came mid-delivery.
        assert delivered(database_url) < len(set(receiver.ids())) < EVENTS

        start("heir")
        wait_until(lambda: delivered(database_url) == EVENTS, 90, "every delivery")
    finally:
        stop(processes, grace=10)

    bad = [(r.headers, r.body[:200]) for r in receiver.received if not r.verified]
    assert not bad, bad[:2]
    ids = receiver.ids()
    assert len(set(ids)) == EVENTS, "every event reached the receiver"
    # At least once: only what the killed worker had in flight (two lanes of 20) came twice.
    assert len(ids) - len(set(ids)) <= 40
    assert {p["type"] for p in receiver.verified()} == {"run.started"}
