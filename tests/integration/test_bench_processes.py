"""The processes and scale benchmarks still run: one server process, tiny scale.

No timing is asserted (tests never assert on wall-clock speed).
"""

from __future__ import annotations

import argparse
import asyncio
import os

import pytest

from tests import benches

# Runs the benchmark as its own processes: a process test (README, "slow").
pytestmark = pytest.mark.slow


def tiny_run(pg_admin_url: str, bench_name: str) -> str:
    """What ``bench/<bench_name>.py`` prints at a tiny scale with one server process."""
    bench = benches.load(bench_name)
    name = f"bench_{bench_name}_test_{os.getpid()}"
    options = argparse.Namespace(
        scale=0.0005, seed=1, reuse=False, inbox=4, claims=6, clients=2, workers=[1], database=name
    )
    lines: list[str] = []
    with benches.dropped_after(pg_admin_url, name):
        asyncio.run(bench.run(pg_admin_url, options, lines.append))
    return "\n".join(lines)


def test_the_processes_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    report = tiny_run(pg_admin_url, "processes")
    assert "metrics.render (a scrape, in process)" in report
    assert "metrics.refresh (the worker's snapshot" in report
    assert "1 process(es): claimNext" in report
    assert "1 process(es): GET /metrics" in report


def test_the_scale_benchmark_prints_each_n_against_one_process_and_the_raw_loop(
    pg_admin_url: str,
) -> None:
    report = tiny_run(pg_admin_url, "scale")
    assert "raw statement loop:" in report
    assert "N=1: inbox" in report
    assert "(x1.00, 100% per process" in report
