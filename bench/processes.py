"""A /metrics scrape at scale, and the server with 1 and 2 processes (``serve --workers N``).

    python bench/processes.py                  # 1 M slots (bench/inbox.py's data), 5-10 min
    python bench/processes.py --scale 0.01     # a smoke run
    python bench/processes.py --reuse          # keep the generated database between runs

On the data ``bench/inbox.py`` generates (same generator, own database):

1. the metrics: ``metrics.render`` (what ``GET /metrics`` runs: the scrape-time
   index probes, the snapshot row, the exposition text) in process, and
   ``metrics.refresh`` (the worker's snapshot of live slots and clocks);
2. for 1 and then 2 server processes (``taskflow serve --workers N`` as a real
   process, no timer worker): the GraphQL ``inbox`` query's p50 and rate from
   concurrent clients, ``claimNext`` claims per second from concurrent
   clients (claimed slots are released after each run), and ``GET /metrics``
   over HTTP. See bench/README.md, "Metrics and several processes".
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
import httpx  # noqa: E402

from taskflow import clock  # noqa: E402
from taskflow.api.graphql.common import relay  # noqa: E402
from taskflow.service.common import container  # noqa: E402
from taskflow.service.reports import metrics  # noqa: E402
from taskflow.store.common import db  # noqa: E402


def _inbox_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("taskflow_bench_inbox", _HERE / "inbox.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


inbox = _inbox_bench()

INBOX = """query Inbox { inbox(first: 50) { edges { node { id name label status dueAt
  subject { externalId } } } } }"""
CLAIM_NEXT = """mutation ClaimNext { claimNext(input: {}) { __typename
  ... on SlotSuccess { slot { id } } } }"""


def ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    spent = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        spent.append(time.perf_counter() - started)
    return spent


async def measure_metrics(url: str, out: Callable[[str], None]) -> None:
    database = await db.Database.connect(url, min_size=1, max_size=2)
    try:
        services = container.build(database, inbox.settings_for(url), clock.SystemClock())
        await metrics.refresh(services, max_age=timedelta(0))  # calendars covered, warm
        refresh = await timed(lambda: metrics.refresh(services, max_age=timedelta(0)), 5)
        scrape = await timed(lambda: metrics.render(services), 50)
        text = (await metrics.render(services)).decode()
    finally:
        await database.close()
    series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    out(
        f"metrics.render (a scrape, in process): p50 {ms(scrape, 0.5):.1f} ms, "
        f"p95 {ms(scrape, 0.95):.1f} ms ({series} series)"
    )
    out(
        f"metrics.refresh (the worker's snapshot, every 15 s): p50 {ms(refresh, 0.5):.0f} ms, "
        f"max {max(refresh) * 1000:.0f} ms"
    )


TASKFLOW_SERVE = [sys.executable, "-m", "taskflow", "serve", "--no-with-worker"]


def start_server(url: str, workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = inbox.free_port()
    env = {
        **os.environ,
        "TASKFLOW_DATABASE_URL": url,
        "TASKFLOW_SECRET_KEYS": inbox.SECRET,
        "TASKFLOW_DATA_DIR": "/tmp/taskflow-bench-processes-unused",
        "TASKFLOW_ENV": "prod",
        "TASKFLOW_PORT": str(port),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [*TASKFLOW_SERVE, "--workers", str(workers)],
            env=env,
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited; see {log}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the server did not answer; see {log}")


async def load(
    base: str, tokens: list[str], query: str, total: int, clients: int, rng: random.Random
) -> tuple[list[float], float, list[dict[str, Any]]]:
    """``total`` requests of ``query`` by random principals over ``clients`` connections."""
    left = total
    spent: list[float] = []
    answers: list[dict[str, Any]] = []

    async def client() -> None:
        nonlocal left
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            while left > 0:
                left -= 1
                headers = {"Authorization": f"Bearer {rng.choice(tokens)}"}
                started = time.perf_counter()
                response = await http.post("/graphql", json={"query": query}, headers=headers)
                spent.append(time.perf_counter() - started)
                answers.append(response.json())

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return spent, time.perf_counter() - started, answers


async def measure_processes(
    url: str, workers: int, options: argparse.Namespace, out: Callable[[str], None]
) -> dict[str, float]:
    """Inbox reads/s and claims/s of ``serve --workers N`` (bench/scale.py compares them)."""
    rates: dict[str, float] = {}
    rng = random.Random(options.seed)
    conn = await asyncpg.connect(url)
    try:
        ids = [r["id"] for r in await conn.fetch("SELECT id FROM principal ORDER BY id")]
    finally:
        await conn.close()
    database = await db.Database.connect(url, min_size=1, max_size=2)
    services = container.build(database, inbox.settings_for(url), clock.SystemClock())
    tokens = [services.staff_tokens.mint(i, services.clock.now()) for i in ids]
    log = Path(f"/tmp/taskflow-bench-processes-{workers}.log")
    server, base = start_server(url, workers, log)
    try:
        await load(base, tokens, INBOX, 40, 4, rng)  # warm every process
        spent, seconds, _ = await load(base, tokens, INBOX, options.inbox, options.clients, rng)
        rates["inbox"] = len(spent) / seconds
        out(
            f"{workers} process(es): inbox p50 {ms(spent, 0.5):.0f} ms, "
            f"p95 {ms(spent, 0.95):.0f} ms, {len(spent) / seconds:.0f} req/s "
            f"({options.clients} clients)"
        )
        spent, seconds, answers = await load(
            base, tokens, CLAIM_NEXT, options.claims, options.clients, rng
        )
        taken = [
            relay.from_global_id(a["data"]["claimNext"]["slot"]["id"])[1]
            for a in answers
            if (a.get("data") or {}).get("claimNext", {}).get("__typename") == "SlotSuccess"
        ]
        rates["claims"] = len(taken) / seconds
        out(
            f"{workers} process(es): claimNext {len(taken) / seconds:.0f} claims/s, "
            f"p50 {ms(spent, 0.5):.0f} ms ({len(taken)} of {len(spent)} calls claimed)"
        )
        async with database.connection() as held:
            await inbox.release(held, taken)
        scrapes = []
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for _ in range(20):
                started = time.perf_counter()
                assert (await http.get("/metrics")).status_code == 200
                scrapes.append(time.perf_counter() - started)
        out(f"{workers} process(es): GET /metrics p50 {ms(scrapes, 0.5):.1f} ms over HTTP")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        await database.close()
    return rates


async def run(admin_url: str, options: argparse.Namespace, out: Callable[[str], None]) -> None:
    prepared = inbox.Options(
        scale=options.scale, seed=options.seed, database=options.database, reuse=options.reuse
    )
    url = await inbox.prepare(admin_url, prepared, out)
    conn = await asyncpg.connect(url)
    try:
        out("data: " + ", ".join(f"{k} {v}" for k, v in (await inbox.counts(conn)).items()))
        await conn.execute("VACUUM (ANALYZE) slot, timer, sla_clock")
    finally:
        await conn.close()
    await measure_metrics(url, out)
    for workers in options.workers:
        await measure_processes(url, workers, options, out)


def options_for(
    argv: Sequence[str] | None, doc: str, workers: list[int], name: str, *, timers: bool = False
) -> argparse.Namespace:
    """The command line of this benchmark and of bench/scale.py (``name``: their database
    and data directory; ``workers``: the default process counts; ``timers``: the options of
    bench/scale.py's timer firings)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 1 M slots (default)")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--reuse", action="store_true", help="reuse a generated database")
    parser.add_argument("--inbox", type=int, default=600, help="inbox requests per run")
    parser.add_argument("--claims", type=int, default=2000, help="claimNext calls per run")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--workers", type=int, nargs="*", default=workers)
    parser.add_argument("--database", default=f"bench_{name}", help=argparse.SUPPRESS)
    parser.add_argument(
        "--data-dir", default=f"/tmp/taskflow-bench-{name}", help="embedded PostgreSQL data dir"
    )
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    if timers:
        parser.add_argument(
            "--timers", type=int, default=5000, help="timers due at once per round (0: none)"
        )
        parser.add_argument("--timer-workers", type=int, nargs="+", default=[1, 2, 4])
        parser.add_argument("--batch", type=int, default=100, help="timers per worker batch")
        parser.add_argument(
            "--timer-timeout", type=float, default=600.0, help="seconds a round may take"
        )
    return parser.parse_args(argv)


def run_on_postgres(
    options: argparse.Namespace,
    run: Callable[[str, argparse.Namespace, Callable[[str], None]], Awaitable[None]],
) -> None:
    """``run`` on ``--admin-url``, else on an embedded PostgreSQL started and stopped here."""
    if options.admin_url:
        asyncio.run(run(options.admin_url, options, print))
        return
    from taskflow.store.common import embedded

    server = embedded.EmbeddedPostgres(Path(options.data_dir))
    try:
        asyncio.run(run(server.url(), options, print))
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> None:
    options = options_for(argv, __doc__ or "", [1, 2], "processes")
    print(f"taskflow processes benchmark: scale {options.scale}, {os.cpu_count()} CPUs")
    run_on_postgres(options, run)


if __name__ == "__main__":
    main()
