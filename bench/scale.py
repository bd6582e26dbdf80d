"""Scaling out on one PostgreSQL: 1, 2 and 4 API processes against the raw statement loop.

    python bench/scale.py                  # 1 M slots (bench/inbox.py's data)
    python bench/scale.py --scale 0.01     # a smoke run (a few minutes on 2 cores)

For N = 1, 2, 4 ``taskflow serve --workers N`` processes (bench/processes.py: real
processes, concurrent HTTP clients, claimed slots released after each run) it prints
inbox reads/s and claimNext claims/s, and beside them the raw statement loop (``SELECT 1``
over asyncpg at the same client concurrency: what the database and the network alone
allow); then each rate's ratio to one process and the per-process efficiency
(ratio / N). See docs/scaling.md for what the figures mean and bench/README.md for them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import asyncpg

_HERE = Path(__file__).resolve().parent


def _processes_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "taskflow_bench_processes", _HERE / "processes.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


processes = _processes_bench()


async def raw_loop(url: str, clients: int, total: int) -> float:
    """``SELECT 1`` per call, ``clients`` at once over a pool: statements/s."""
    pool = await asyncpg.create_pool(url, min_size=clients, max_size=clients)
    assert pool is not None
    left = total

    async def client() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            async with pool.acquire() as conn:
                await conn.fetchval("SELECT 1")

    try:
        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return total / (time.perf_counter() - started)
    finally:
        await pool.close()


async def run(admin_url: str, options: argparse.Namespace, out: Callable[[str], None]) -> None:
    prepared = processes.inbox.Options(
        scale=options.scale, seed=options.seed, database=options.database, reuse=options.reuse
    )
    url = await processes.inbox.prepare(admin_url, prepared, out)
    raw = await raw_loop(url, options.clients, options.claims * 2)
    out(f"raw statement loop: {raw:.0f} statements/s ({options.clients} clients)")
    by_n = {n: await processes.measure_processes(url, n, options, out) for n in options.workers}
    first = by_n[options.workers[0]]
    for n, rates in by_n.items():
        cells = []
        for name, rate in rates.items():
            ratio = rate / first[name] if first.get(name) else 0.0
            cells.append(
                f"{name} {rate:.0f}/s (x{ratio:.2f}, {ratio / n:.0%} per process, "
                f"{rate / raw:.1%} of raw)"
            )
        out(f"N={n}: " + "; ".join(cells))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 1 M slots (default)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--reuse", action="store_true", help="reuse a generated database")
    parser.add_argument("--inbox", type=int, default=600, help="inbox requests per N")
    parser.add_argument("--claims", type=int, default=2000, help="claimNext calls per N")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--database", default="bench_scale", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-scale")
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    options = parser.parse_args(argv)
    print(f"taskflow scale benchmark: scale {options.scale}, {os.cpu_count()} CPUs")
    if options.admin_url:
        asyncio.run(run(options.admin_url, options, print))
        return
    from taskflow.store.common import embedded

    server = embedded.EmbeddedPostgres(Path(options.data_dir))
    try:
        asyncio.run(run(server.url(), options, print))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
