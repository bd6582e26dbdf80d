"""Real ``taskflow worker`` processes over thousands of timers: each fires exactly once.

Every timer here is a state timeout of its own support-ticket run parked in
*resolved* ("after 7 real days: move to closed"): firing it writes a
``timeout.fired`` line on the run's timeline and closes the run. So a timer
that fired twice would leave two lines, and one that was lost leaves its run
open. The workers run on the real clock; timers are made due "now".
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from taskflow.service.versions import definitions
from tests.acceptance.conftest import TASKFLOW, spawn, stop, stopping, wait_until, worker_env

DIGEST = definitions.load_from_env({}).get("support-ticket").digest

#: ``$6``: now, as the workers that will fire these timers read it (the real clock for a
#: worker process, the frozen one in process): never the database's own clock.
SEED = """
WITH subjects AS (
    INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
    SELECT gen_random_uuid(), 'ticket', $1 || g, '{"priority": "P3"}'::jsonb, 1, $6, $6
    FROM generate_series(1, $2) g
    RETURNING id
), runs AS (
    INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                     visit, started_at, state_entered_at, updated_at, version)
    SELECT gen_random_uuid(), 'support-ticket', 1, $3, id, 'resolved', 'active', 1,
           $6, $6, $6, 1
    FROM subjects
    RETURNING id
)
INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, updated_at)
SELECT id || ':1:timeout:0', id, NULL, 'timeout', '0',
       $6 + $4 * interval '1 second' * random() + $5 * interval '1 second',
       'armed', 0, $6
FROM runs
"""


def seed(url: str, n: int, *, spread: float = 1.0, offset: float = 0.0, prefix: str = "T-") -> None:
    """``n`` runs, each with one armed timeout due within ``spread`` s of now + ``offset`` s."""

    async def go() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(SEED, prefix, n, DIGEST, spread, offset, datetime.now(UTC))
        finally:
            await conn.close()

    asyncio.run(go())


def query(url: str, sql: str) -> list[Any]:
    async def go() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(sql))
        finally:
            await conn.close()

    return asyncio.run(go())


def armed(url: str) -> int:
    return int(query(url, "SELECT count(*) FROM timer WHERE status = 'armed'")[0][0])


def assert_each_fired_once(url: str, n: int) -> None:
    fired = query(
        url,
        "SELECT run, count(*) AS n FROM audit_event WHERE kind = 'timeout.fired' GROUP BY run",
    )
    assert len(fired) == n, f"{n - len(fired)} timers never fired"
    assert max(r["n"] for r in fired) == 1, "a timer fired twice"
    states = query(url, "SELECT state, status, count(*) AS n FROM run GROUP BY state, status")
    assert [(r["state"], r["status"], r["n"]) for r in states] == [("closed", "completed", n)]
    timers = query(url, "SELECT status, fired, count(*) AS n FROM timer GROUP BY status, fired")
    assert [(r["status"], r["fired"], r["n"]) for r in timers] == [("fired", 1, n)]


class Workers:
    """``taskflow worker`` processes on one database, their output in files."""

    def __init__(self, url: str, root: Path) -> None:
        self.root = root
        self.env = worker_env(url, root)
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, count: int = 1, *args: str) -> list[subprocess.Popen[str]]:
        started = []
        for _ in range(count):
            log = self.root / f"worker-{len(self.processes)}.log"
            process = spawn([*TASKFLOW, "worker", *args], self.env, log)
            self.processes.append(process)
            started.append(process)
        for process, log in zip(started, self.logs()[-count:], strict=True):
            wait_until(lambda log=log: "worker started" in log.read_text(), 30, "worker start")
            assert process.poll() is None
        return started

    def logs(self) -> list[Path]:
        return [self.root / f"worker-{i}.log" for i in range(len(self.processes))]

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()}" for p in self.logs())

    def stop(self) -> None:
        stop(self.processes, grace=10)


@pytest.fixture
def workers(database_url: str, tmp_path: Path) -> Iterator[Workers]:
    with stopping(Workers(database_url, tmp_path)) as running:
        yield running


def wait_all_fired(url: str, workers: Workers, timeout: float = 90) -> None:
    def done() -> bool:
        for process in workers.processes:
            if process.returncode is None and process.poll() is not None:
                raise AssertionError(f"a worker exited:\n{workers.output()}")
        return armed(url) == 0

    wait_until(done, timeout, f"every timer to fire\n{workers.output()}")


@pytest.mark.parametrize(("count", "timers"), [(2, 1000), (4, 2000)])
def test_several_workers_fire_each_of_thousands_of_timers_exactly_once(
    database_url: str, workers: Workers, count: int, timers: int
) -> None:
    seed(database_url, timers, spread=3.0, offset=1.0)
    workers.start(count, "--batch", "50")
    wait_all_fired(database_url, workers)
    assert_each_fired_once(database_url, timers)


def test_a_worker_killed_mid_batch_loses_and_doubles_nothing(
    database_url: str, workers: Workers
) -> None:
    timers = 1500
    seed(database_url, timers, spread=0.0)
    [victim] = workers.start(1, "--batch", "100")
    wait_until(lambda: armed(database_url) < timers - 100, 60, "the first batches to commit")
    victim.send_signal(signal.SIGKILL)  # whatever batch it held is rolled back, not half-done
    victim.wait(timeout=10)
    assert 0 < armed(database_url) < timers
    workers.start(1, "--batch", "100")
    wait_all_fired(database_url, workers)
    assert_each_fired_once(database_url, timers)


def test_timers_due_while_every_worker_was_down_fire_once_oldest_first(
    database_url: str, workers: Workers
) -> None:
    timers = 1000
    # Due over the last hour, while no worker ran.
    seed(database_url, timers, spread=3600.0, offset=-3601.0)
    started = time.monotonic()
    workers.start(1, "--batch", "100")
    wait_all_fired(database_url, workers)
    assert time.monotonic() - started < 60
    assert_each_fired_once(database_url, timers)
    order = query(database_url, "SELECT due_at, fired_at FROM timer ORDER BY due_at, id")
    fired_at = [r["fired_at"] for r in order]
    assert fired_at == sorted(fired_at), "a later timer fired before an earlier one"


def _restart_postgres(admin_url: str, url: str) -> None:
    """Restart the session's embedded PostgreSQL: a fast shutdown drops every connection.

    On an external test server (not ours to restart) every connection to the test's
    database is terminated instead, which is what a restart looks like to a worker.
    """
    if os.environ.get("TASKFLOW_TEST_DATABASE_URL"):
        query(
            admin_url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{url.rpartition('/')[2].partition('?')[0]}'",
        )
        return
    from pgserver import _commands

    socket_dir = Path(admin_url.partition("host=")[2].split("&")[0])
    user = "pgserver" if os.geteuid() == 0 else None
    _commands.pg_ctl(["-w", "restart", "-m", "fast"], pgdata=socket_dir, user=user)


def test_a_running_worker_survives_a_database_restart(
    database_url: str, pg_admin_url: str, workers: Workers
) -> None:
    workers.start(1)
    seed(database_url, 200, spread=0.5)
    wait_all_fired(database_url, workers)
    _restart_postgres(pg_admin_url, database_url)
    seed(database_url, 300, spread=0.5, prefix="U-")
    wait_all_fired(database_url, workers, timeout=60)
    assert_each_fired_once(database_url, 500)
    assert "database unavailable" in workers.output()
