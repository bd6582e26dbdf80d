"""The inbox benchmark still runs: its generator at a tiny scale and every measuring loop.

No timing is asserted (tests never assert on wall-clock speed); the benchmark
itself checks that raw SQL, the service, the plain endpoint and GraphQL serve
the same rows, and that no slot is claimed twice.
"""

from __future__ import annotations

import asyncio
import os

import asyncpg
import pytest

from tests import benches

# Runs the benchmark as its own processes: a process test (README, "slow").
pytestmark = pytest.mark.slow


def test_the_inbox_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    bench = benches.load("inbox")
    name = f"bench_inbox_test_{os.getpid()}"
    options = bench.Options(
        scale=0.0005,
        iterations=4,
        claims=12,
        latency_calls=4,
        database=name,
        keep=False,
        rounds=2,
    )
    lines: list[str] = []
    phases = asyncio.run(bench.run(pg_admin_url, options, lines.append))

    both = ["fresh (after VACUUM ANALYZE)", "after churn (no vacuum)"]
    assert [p.name for p in phases] == both * 2
    for phase in phases:
        assert [len(lat.ms) for lat in phase.inbox] == [4] * 5
        assert [(c.claimers, c.attempts) for c in phase.claims] == [(8, 12)] * 2 + [(32, 12)] * 2
        assert all(c.claims > 0 for c in phase.claims)
        assert [len(lat.ms) for lat in phase.claim_latency] == [4, 4]
    report = "\n".join(lines)
    assert "GraphQL inbox (HTTP)" in report
    assert "service slots.claim_next" in report
    # The summary: both rounds and their mean, fresh and after churn side by side.
    summary = report[report.index("== summary") :].splitlines()
    assert [line.split()[0] for line in summary[3:6]] == ["1", "2", "mean"]
    assert all(len(line.split()) >= 10 for line in summary[3:5])

    async def dropped() -> bool:
        conn = await asyncpg.connect(pg_admin_url)
        try:
            return not await conn.fetchval("SELECT true FROM pg_database WHERE datname = $1", name)
        finally:
            await conn.close()

    assert asyncio.run(dropped())
