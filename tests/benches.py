"""Loading a benchmark of bench/ as a module, and dropping the database it generated."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType

import asyncpg

from taskflow.config.config import PROJECT_ROOT


def load(name: str) -> ModuleType:
    """bench/``name``.py as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location(
        f"taskflow_bench_{name}", PROJECT_ROOT / "bench" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def dropped_after(admin_url: str, *databases: str) -> Iterator[None]:
    """Drop ``databases`` (a benchmark's generated ones) when the block ends, however it ends."""
    try:
        yield
    finally:

        async def drop() -> None:
            conn = await asyncpg.connect(admin_url)
            try:
                for database in databases:
                    await conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            finally:
                await conn.close()

        asyncio.run(drop())
