"""The processes benchmark still runs: its metrics part and one server process, tiny scale.

No timing is asserted (tests never assert on wall-clock speed).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
from types import ModuleType

import asyncpg
import pytest

from taskflow.config import PROJECT_ROOT

# Runs the benchmark as its own processes: a process test (README, "slow").
pytestmark = pytest.mark.slow


def _bench() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "processes.py"
    spec = importlib.util.spec_from_file_location("taskflow_bench_processes", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_processes_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    bench = _bench()
    name = f"bench_processes_test_{os.getpid()}"
    options = argparse.Namespace(
        scale=0.0005, seed=1, reuse=False, inbox=4, claims=6, clients=2, workers=[1], database=name
    )
    lines: list[str] = []
    try:
        asyncio.run(bench.run(pg_admin_url, options, lines.append))
    finally:

        async def drop() -> None:
            conn = await asyncpg.connect(pg_admin_url)
            try:
                await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            finally:
                await conn.close()

        asyncio.run(drop())
    report = "\n".join(lines)
    assert "metrics.render (a scrape, in process)" in report
    assert "metrics.refresh (the worker's snapshot" in report
    assert "1 process(es): claimNext" in report
    assert "1 process(es): GET /metrics" in report
