"""The candidacy A/B benchmark still runs (bench/candidacy.py) on a tiny generated database."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from types import ModuleType

import asyncpg
import pytest

from taskflow.config import PROJECT_ROOT


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"taskflow_bench_{name}", PROJECT_ROOT / "bench" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def test_the_candidacy_benchmark_runs_at_a_tiny_scale(
    pg_admin_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    inbox, candidacy = _load("inbox"), _load("candidacy")
    name = f"bench_candidacy_test_{os.getpid()}"
    options = inbox.Options(scale=0.0005, database=name)
    url = asyncio.run(inbox.prepare(pg_admin_url, options, lambda line: None))
    try:
        asyncio.run(candidacy.run(url, 4, 30.0, 1))
    finally:

        async def drop() -> None:
            conn = await asyncpg.connect(pg_admin_url)
            try:
                await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            finally:
                await conn.close()

        asyncio.run(drop())
    printed = capsys.readouterr().out
    assert "generated data (no residual rules)" in printed
    assert "30 % of open slots with a residual rule" in printed
    assert printed.count("inbox now") == 2
