"""Versions: the start-up registry check and ``taskflow runs migrate --plan`` on many live runs.

    python bench/versions.py [--runs 100000] [--repeat 5]

Seeds ``--runs`` live runs of ``leave-request`` (tests/api/version_workflows.py), 80 % on
version 1 and 20 % on version 2, spread over its states, plus as many ended runs; then times,
``--repeat`` times each, in one process against one database: the start-up check
(``service.deployments.register``: lock, read the registry, count live runs per version,
record), the migration plan to version 2 (``service.deployments.migration_plan``, what the
command prints), and as the baseline a bare ``SELECT count(*) FROM run`` (one pass over the
table). Prints the median seconds and the ratio to the baseline. The database:
``TASKFLOW_BENCH_DATABASE_URL`` (an admin URL), else an embedded PostgreSQL in
``/tmp/tfbench-versions``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskflow import clock  # noqa: E402
from taskflow.config import config  # noqa: E402
from taskflow.service.common import container  # noqa: E402
from taskflow.service.versions import deployments  # noqa: E402
from taskflow.store.common import db, migrate  # noqa: E402
from taskflow.store.common.db import with_database  # noqa: E402

DATABASE = "bench_versions"
WORKFLOWS = ROOT / "tests" / "api" / "version_workflows.py"

SUBJECTS = """
INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
SELECT gen_random_uuid(), 'leave', 'L-' || g, '{}'::jsonb, 1, now(), now()
FROM generate_series(1, $1) g
"""
SEED = """
WITH subjects AS (SELECT id, substr(external_id, 3)::int AS n FROM subject WHERE type = 'leave')
INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                 visit, started_at, state_entered_at, updated_at, version)
SELECT gen_random_uuid(), 'leave-request',
       CASE WHEN n % 5 = 0 THEN 2 ELSE 1 END, 'sha256:bench', id,
       CASE WHEN n % 2 = 1 THEN CASE WHEN n % 5 = 0 THEN 'hr_check' ELSE 'review' END
            WHEN n % 4 = 0 THEN 'approved' ELSE 'rejected' END,
       CASE WHEN n % 2 = 1 THEN 'active' WHEN n % 4 = 0 THEN 'completed' ELSE 'cancelled' END,
       1, now(), now(), now(), 1
FROM subjects
"""


async def timed(repeat: int, work: Callable[[], Awaitable[Any]]) -> float:
    await work()  # warm-up
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        await work()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


async def main(args: argparse.Namespace) -> None:
    admin_url = os.environ.get("TASKFLOW_BENCH_DATABASE_URL")
    server = None
    if admin_url is None:
        from taskflow.store.common import embedded

        server = embedded.EmbeddedPostgres(Path("/tmp/tfbench-versions"))
        admin_url = server.url()
    try:
        conn = await asyncpg.connect(admin_url)
        await conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        await conn.execute(f"CREATE DATABASE {DATABASE}")
        await conn.close()
        url = with_database(admin_url, DATABASE)
        await migrate.migrate(url)
        conn = await asyncpg.connect(url)
        await conn.execute(SUBJECTS, 2 * args.runs)
        await conn.execute(SEED)  # half of them end: odd rows stay live
        await conn.execute("ANALYZE")
        await conn.close()

        settings = dataclasses.replace(
            config.load({"TASKFLOW_SECRET_KEYS": "b" * 32, "TASKFLOW_DATABASE_URL": url}),
            workflows=(str(WORKFLOWS),),
        )
        database = await db.Database.connect(url)
        try:
            services = container.build(database, settings, clock.FrozenClock(datetime.now(UTC)))

            async def baseline() -> None:
                async with database.connection() as c:
                    await c.fetchval("SELECT count(*) FROM run")

            async def plan() -> None:
                lines = await deployments.migration_plan(services, "leave-request", 2)
                assert sum(line.runs for line in lines) == args.runs * 4 // 5

            base = await timed(args.repeat, baseline)
            start = await timed(args.repeat, lambda: deployments.register(services))
            planned = await timed(args.repeat, plan)
        finally:
            await database.close()
        print(f"{args.runs} live runs (and {args.runs} ended); median of {args.repeat}")
        print(f"{'what':<36} {'seconds':>8} {'x count(*)':>10}")
        for label, value in (
            ("SELECT count(*) FROM run (baseline)", base),
            ("start-up check (register)", start),
            ("runs migrate --plan", planned),
        ):
            print(f"{label:<36} {value:>8.3f} {value / base:>10.2f}")
    finally:
        if server is not None:
            server.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
