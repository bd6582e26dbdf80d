"""The live benchmark still runs: a server process, a few subscriptions, a few changes.

No timing is asserted (tests never assert on wall-clock speed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re

import pytest

from tests import benches

# Runs the benchmark's server and echo as their own processes (README, "slow").
pytestmark = pytest.mark.slow


def test_the_live_benchmark_runs_at_a_tiny_scale(pg_admin_url: str) -> None:
    bench = benches.load("live")
    name = f"bench_live_test_{os.getpid()}"
    options = argparse.Namespace(
        subscriptions=8,
        slots=4,
        baseline_slots=2,
        rate=10.0,
        seconds=1.0,
        database=name,
        writer="other",
    )
    lines: list[str] = []
    with benches.dropped_after(pg_admin_url, name):
        asyncio.run(bench.run(pg_admin_url, options, lines.append))
    report = "\n".join(lines)
    # 10 changes on 4 slots, each slot watched twice: 20 messages, every one delivered.
    assert re.search(
        r"taskflow \(mutations on the other process\): "
        r"8 subscriptions on 1 connections, 10 changes/s asked for 1 s, "
        r"\d+/s made: 20 messages",
        report,
    )
    assert re.search(r"commit to delivery p50 [\d.]+ ms, p99 [\d.]+ ms", report)
    assert "memory per subscription" in report
    assert re.search(r"raw LISTEN -> WebSocket echo \(1 sockets\): .* over 10 messages", report)
