"""The scale benchmark still runs (one server process, tiny scale): it prints the raw
statement loop and each N's rates with their ratio to one process.

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


def test_the_scale_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    bench = benches.load("scale")
    name = f"bench_scale_test_{os.getpid()}"
    options = argparse.Namespace(
        scale=0.0005, seed=1, reuse=False, inbox=4, claims=6, clients=2, workers=[1], database=name
    )
    lines: list[str] = []
    with benches.dropped_after(pg_admin_url, name):
        asyncio.run(bench.run(pg_admin_url, options, lines.append))
    report = "\n".join(lines)
    assert "raw statement loop:" in report
    assert "N=1: inbox" in report
    assert "(x1.00, 100% per process" in report
