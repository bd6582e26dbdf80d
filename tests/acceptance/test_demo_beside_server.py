"""README's tour as written: `taskflow serve` first (its timer worker on), `taskflow demo` in a
second terminal, and again. Each demo run is written in one transaction, so the worker
firing the demo's past timers meanwhile can neither deadlock it nor leave a run half-played;
the result equals a demo run alone (then served, so its due timers fired too)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.acceptance.conftest import Deployment, wait_until

pytestmark = pytest.mark.slow

#: Each run as it ended up: its workflow, subject, state, status and every slot's status.
SUMMARY = """
    SELECT r.workflow, s.external_id, r.state, r.status,
           (SELECT string_agg(x.name || '=' || x.status, ' ' ORDER BY x.name, x.status)
              FROM slot x WHERE x.run = r.id) AS slots
    FROM run r JOIN subject s ON s.id = r.subject
    ORDER BY r.workflow, s.external_id, r.started_at
"""
DUE = "SELECT count(*) FROM timer WHERE status = 'armed' AND due_at <= now()"


def _query(data_dir: Path, sql: str) -> list[Any]:
    """``sql`` on the serving process's embedded PostgreSQL (its unix socket, trust auth)."""
    url = f"postgresql://postgres:@/postgres?host={data_dir.resolve() / 'pg'}"

    async def go() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return [tuple(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    return asyncio.run(go())


def _settled(deployment: Deployment) -> list[Any]:
    """The runs once the server's worker has fired every timer due (the demo's past ones)."""
    wait_until(
        lambda: _query(deployment.data_dir, DUE)[0][0] == 0, 120, "the worker to fire due timers"
    )
    return _query(deployment.data_dir, SUMMARY)


def _stop(server: Any) -> None:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def test_demo_twice_beside_a_running_server_equals_a_demo_alone(tmp_path: Path) -> None:
    import tempfile

    alone = Deployment(Path(tempfile.mkdtemp(prefix="taskflow-acceptance-", dir="/tmp")))
    beside = Deployment(Path(tempfile.mkdtemp(prefix="taskflow-acceptance-", dir="/tmp")))
    try:
        seeded = alone.run("demo")
        assert seeded.returncode == 0, seeded.stderr
        server = alone.serve("--with-worker")
        try:
            expected = _settled(alone)
        finally:
            _stop(server)

        server = beside.serve("--with-worker")
        try:
            first = beside.run("demo")
            assert first.returncode == 0, first.stderr
            assert "Traceback" not in first.stderr
            assert "15 runs started, 0 already there" in first.stdout
            assert "92 played at their own instants of the last weeks, 0 already" in first.stdout
            again = beside.run("demo")
            assert again.returncode == 0, again.stderr
            assert "0 runs started, 15 already there" in again.stdout
            assert "0 played at their own instants of the last weeks, 92 already" in again.stdout
            found = _settled(beside)
        finally:
            _stop(server)
        # 15 runs started and 92 played, with the child runs they await (the vendors'
        # security assessments, the hires' laptop, accounts and badge requests and the
        # withdrawn hire's compensations), each settled the same way beside a server as alone.
        assert len(found) == len(expected) == 116
        assert found == expected
    finally:
        import shutil

        from tests.acceptance.conftest import postgres_processes

        for deployment in (alone, beside):
            for proc in postgres_processes(deployment.data_dir):
                proc.kill()
            shutil.rmtree(deployment.data_dir.parent, ignore_errors=True)
