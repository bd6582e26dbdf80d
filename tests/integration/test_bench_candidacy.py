"""The candidacy A/B benchmark still runs (bench/candidacy.py) on a tiny generated database."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests import benches


def test_the_candidacy_benchmark_runs_at_a_tiny_scale(
    pg_admin_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    inbox, candidacy = benches.load("inbox"), benches.load("candidacy")
    name = f"bench_candidacy_test_{os.getpid()}"
    options = inbox.Options(scale=0.0005, database=name)
    url = asyncio.run(inbox.prepare(pg_admin_url, options, lambda line: None))
    with benches.dropped_after(pg_admin_url, name):
        asyncio.run(candidacy.run(url, 4, 30.0, 1))
    printed = capsys.readouterr().out
    assert "generated data (no residual rules)" in printed
    assert "30 % of open slots with a residual rule" in printed
    assert printed.count("inbox now") == 2
