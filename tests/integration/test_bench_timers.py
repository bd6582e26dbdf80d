"""The timer benchmark still runs: both loops fire every seeded timer once, at a tiny size.

No timing is asserted (tests never assert on wall-clock speed); the benchmark
itself checks that every seeded timer fired, in both the raw loop and the
``taskflow worker`` processes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from taskflow.config.config import PROJECT_ROOT
from tests import benches

# Runs the benchmark as its own processes: a process test (README, "slow").
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("kind", ["timeout", "expire"])
def test_the_timer_benchmark_runs_at_a_tiny_size(pg_admin_url: str, kind: str) -> None:
    prefix = f"bench_timers_test_{os.getpid()}_{kind}"
    with benches.dropped_after(pg_admin_url, *benches.load("timers").databases(prefix)):
        done = run_bench(pg_admin_url, kind, prefix)
    assert done.returncode == 0, done.stderr[-6000:]
    rows = [line.split() for line in done.stdout.splitlines()[2:]]
    assert [row[0] for row in rows] == ["1", "2"]
    assert all(float(row[2]) > 0 for row in rows)  # taskflow fired every timer (else it raises)


def run_bench(pg_admin_url: str, kind: str, prefix: str) -> subprocess.CompletedProcess[str]:
    """bench/timers.py with 40 timers due over a second, 1 and 2 workers."""
    return subprocess.run(
        [
            sys.executable,
            str(PROJECT_ROOT / "bench" / "timers.py"),
            "--timers",
            "40",
            "--window",
            "1",
            "--workers",
            "1,2",
            "--batch",
            "7",
            "--timeout",
            "120",
            "--kind",
            kind,
            "--prefix",
            prefix,
        ],
        env={**os.environ, "TASKFLOW_BENCH_DATABASE_URL": pg_admin_url},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
