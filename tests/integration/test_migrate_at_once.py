"""Two hosts deploying at once both run ``taskflow migrate`` on one empty database: one applies
the migrations, the other waits for it and then finds nothing left to do; both succeed and every
migration is applied exactly once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import asyncpg
import pytest

from taskflow.config import config
from taskflow.store.common import db

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DATABASE = "migrate_at_once"


async def test_two_hosts_migrating_one_database_at_once_both_succeed(pg_admin_url: str) -> None:
    admin = await asyncpg.connect(pg_admin_url)
    await admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    await admin.execute(f"CREATE DATABASE {DATABASE}")
    await admin.close()
    url = db.with_database(pg_admin_url, DATABASE)
    env = {**os.environ, "TASKFLOW_DATABASE_URL": url, "TASKFLOW_SECRET_KEYS": "k" * 48}
    env.pop("TASKFLOW_DATABASE_LISTEN_URL", None)
    hosts = [
        subprocess.Popen(  # noqa: ASYNC220 (two processes, as two hosts; waited for in a thread)
            [sys.executable, "-m", "taskflow", "migrate"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [(await asyncio.to_thread(host.communicate, timeout=300))[0] for host in hosts]
    assert [host.returncode for host in hosts] == [0, 0], outputs
    assert all("the database is up to date" in output for output in outputs), outputs
    # Both started together and a migration from empty takes seconds: one waited for the other.
    assert sum("another process is migrating" in output for output in outputs) == 1, outputs

    conn = await asyncpg.connect(url)
    try:
        applied = await conn.fetch("SELECT name, count(*) AS n FROM migration GROUP BY name")
    finally:
        await conn.close()
    shipped = len(list((config.PROJECT_ROOT / "migrations").glob("taskflow_*.py")))
    assert len(applied) == shipped, (len(applied), shipped)
    assert all(row["n"] == 1 for row in applied), [tuple(r) for r in applied]
