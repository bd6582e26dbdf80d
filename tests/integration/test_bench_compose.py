"""The composition benchmark still runs: parents awaiting children through ``taskflow
worker``, and the raw fan-out loop, at a tiny size.

No timing is asserted (tests never assert on wall-clock speed); the benchmark itself checks
that every parent was resumed once its children ended.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from taskflow.config.config import PROJECT_ROOT

# Runs the benchmark as its own processes: a process test (README, "slow").
pytestmark = pytest.mark.slow


def test_the_compose_benchmark_runs_at_a_tiny_size(pg_admin_url: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(PROJECT_ROOT / "bench" / "compose.py"),
            "--parents",
            "6",
            "--batch",
            "7",
            "--timeout",
            "120",
        ],
        env={**os.environ, "TASKFLOW_BENCH_DATABASE_URL": pg_admin_url},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "6 parents x 10 children" in done.stdout
    assert "parent resume after its last child ended (6 parents)" in done.stdout
    # raw /s, taskflow /s (end to end through a worker), its ratio, the child lane's /s, ratio
    [rates] = [line.split() for line in done.stdout.splitlines() if len(line.split()) == 5]
    raw, taskflow, _, lane, _ = (float(figure) for figure in rates)
    assert raw > 0
    assert taskflow > 0
    assert lane > 0
