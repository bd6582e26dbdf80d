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
    """What ``bench/<bench_name>.py`` prints at a tiny scale with one server process (and,
    for bench/scale.py, 30 timers fired by 1 and then 2 worker processes)."""
    bench = benches.load(bench_name)
    name = f"bench_{bench_name}_test_{os.getpid()}"
    options = argparse.Namespace(
        scale=0.0005, seed=1, reuse=False, inbox=4, claims=6, clients=2, workers=[1], database=name
    )
    options.timers, options.timer_workers, options.batch, options.timer_timeout = 30, [1, 2], 7, 60
    timer_databases = benches.load("timers").databases(f"{name}_timers")
    lines: list[str] = []
    with benches.dropped_after(pg_admin_url, name, *timer_databases):
        asyncio.run(bench.run(pg_admin_url, options, lines.append))
    return "\n".join(lines)


def test_the_processes_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    report = tiny_run(pg_admin_url, "processes")
    assert "metrics.render (a scrape, in process)" in report
    assert "metrics.refresh (the worker's snapshot" in report
    assert "1 process(es): claimNext" in report
    assert "1 process(es): GET /metrics" in report


def test_the_scale_benchmark_prints_each_n_and_m_against_one_and_the_raw_loops(
    pg_admin_url: str,
) -> None:
    report = tiny_run(pg_admin_url, "scale")
    assert "raw statement loop:" in report
    assert "N=1: inbox" in report
    assert "(x1.00, 100% per process" in report
    # Timer firings with M worker processes: each round checks from the database that
    # every timer fired once (else it raises).
    firings = [line.split(":")[0] for line in report.splitlines() if "timer firings" in line]
    assert firings == ["M=1", "M=2"]
    assert "(x1.00, 100% per worker); raw loop" in report
