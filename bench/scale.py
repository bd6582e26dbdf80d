"""Scaling out on one PostgreSQL: 1, 2 and 4 API processes and timer workers against raw loops.

    python bench/scale.py                  # 1 M slots (bench/inbox.py's data)
    python bench/scale.py --scale 0.01     # a smoke run (a few minutes on 2 cores)
    python bench/scale.py --workers --timers 20000   # timer firings only (no API processes)

For N = 1, 2, 4 ``taskflow serve --workers N`` processes (bench/processes.py: real
processes, concurrent HTTP clients, claimed slots released after each run) it prints
inbox reads/s and claimNext claims/s, and beside them the raw statement loop (``SELECT 1``
over asyncpg at the same client concurrency: what the database and the network alone
allow); then each rate's ratio to one process and the per-process efficiency
(ratio / N).

Then timer firings/s with M = 1, 2, 4 ``taskflow worker`` processes (bench/timers.py's
rounds: ``--timers`` state timeouts prepared in bulk, all due at once, so the rate is the
workers' capacity, counted from the database as timers / (last firing - due instant)),
beside bench/timers.py's raw loop doing the same UPDATEs and INSERTs in as many processes;
each with its ratio to M = 1 and the per-worker efficiency (ratio / M). See docs/scaling.md
for what the figures mean and bench/README.md for them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import asyncpg

# bench/calendar.py would shadow the standard library's calendar module if this folder
# stayed first on sys.path; drop it, make the repository importable (as bench/compose.py).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
if str(_HERE.parent) not in sys.path:
    sys.path.insert(0, str(_HERE.parent))

from bench import processes  # noqa: E402
from bench import timers as timer_bench  # noqa: E402


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
    if options.workers:
        await api_processes(admin_url, options, out)
    if options.timers:
        await timer_firings(admin_url, options, out)


async def api_processes(
    admin_url: str, options: argparse.Namespace, out: Callable[[str], None]
) -> None:
    """Inbox reads/s and claims/s of N API processes, beside the raw statement loop."""
    prepared = processes.inbox.Options(
        scale=options.scale, seed=options.seed, database=options.database, reuse=options.reuse
    )
    url = await processes.inbox.prepare(admin_url, prepared, out)
    raw = await raw_loop(url, options.clients, options.claims * 2)
    out(f"raw statement loop: {raw:.0f} statements/s ({options.clients} clients)")
    by_n = {n: await processes.measure_processes(url, n, options, out) for n in options.workers}
    names = list(by_n[options.workers[0]])
    cells = {name: scaled({n: by_n[n][name] for n in by_n}, "process") for name in names}
    for n, rates in by_n.items():
        shares = (f"{name} {cells[name][n]}, {rates[name] / raw:.1%} of raw" for name in names)
        out(f"N={n}: " + "; ".join(shares))


def scaled(rates: dict[int, float], unit: str) -> dict[int, str]:
    """Each count's rate with its ratio to the first count's and the efficiency per ``unit``
    (ratio / count, against the first count's)."""
    first_n, first = next(iter(rates.items()))
    cells = {}
    for n, rate in rates.items():
        ratio = rate / first if first else 0.0
        cells[n] = f"{rate:.0f}/s (x{ratio:.2f}, {ratio * first_n / n:.0%} per {unit})"
    return cells


async def timer_firings(
    admin_url: str, options: argparse.Namespace, out: Callable[[str], None]
) -> None:
    """Firings/s of M ``taskflow worker`` processes and of the raw loop in M processes."""
    args = timer_bench.parse(
        [
            *("--timers", str(options.timers), "--window", "0", "--batch", str(options.batch)),
            *("--timeout", str(options.timer_timeout), "--prefix", f"{options.database}_timers"),
        ]
    )
    await timer_bench.migrated_template(admin_url, args.prefix)
    raw: dict[int, float] = {}
    ours: dict[int, float] = {}
    for m in options.timer_workers:
        raw[m] = (await timer_bench.round_raw(admin_url, options.timers, m, args)).rate
        ours[m] = (await timer_bench.round_taskflow(admin_url, options.timers, m, args)).rate
    raw_cells, our_cells = scaled(raw, "worker"), scaled(ours, "worker")
    for m in options.timer_workers:
        out(
            f"M={m}: timer firings {our_cells[m]}; raw loop {raw_cells[m]}; "
            f"{ours[m] / raw[m]:.0%} of raw ({options.timers} timers due at once)"
        )


def main(argv: Sequence[str] | None = None) -> None:
    options = processes.options_for(argv, __doc__ or "", [1, 2, 4], "scale", timers=True)
    print(f"taskflow scale benchmark: scale {options.scale}, {os.cpu_count()} CPUs")
    processes.run_on_postgres(options, run)


if __name__ == "__main__":
    main()
