"""Automatic steps: ``taskflow worker`` processes against a raw SQL loop doing the same row work.

    python bench/steps.py [--steps 10000] [--workers 1,4] [--batch 100] [--profile DIR]
                          [--automations 100]

Each round gets a fresh database (a copy of a migrated template) seeded with
``--steps`` runs of ``bench/step_workflow.py`` sitting in their automatic state,
each with its step row due at once, as the decision that enters the state writes
it (capacity, not lateness; the workers are woken as that decision wakes them). A
worker takes the steps under a lease, runs the actions (they return at once),
records the attempts, stores the results, and takes the ``on_success`` routes:
the runs complete. The baseline, in the same run and on the same database
server, is a raw SQL loop in as many processes doing the same row work in one
transaction per batch: take due steps and their runs ``SKIP LOCKED``, mark the
steps succeeded with their results, write their attempts, complete the runs with
their results, and write the five timeline lines a completed step writes.

Prints, per worker count: steps per second (steps / (last run completed - first
due instant)), the ratio to the raw loop, and the CPU seconds the processes (the
workers, the raw loop's) spent per 10 000 steps from the seeding to the last run
completed (less sensitive than rates to other work on the machine). ``--profile DIR``
runs each worker under cProfile (``DIR/worker-<workers>-<i>.prof``). The database:
``TASKFLOW_BENCH_DATABASE_URL`` (an admin URL), else an embedded PostgreSQL in
``/tmp/tfbench-steps``. ``--automations N`` runs the taskflow round again with N
published automations of the workflow evaluated on every state entered
(``bench/automation_load.py``), and prints the decisions they made by the last completion.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

# bench/calendar.py would shadow the standard library's calendar module (which holidays
# imports) if this folder stayed first on sys.path; drop it, make the repository importable.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import automation_load, pg  # noqa: E402
from taskflow.service.versions import definitions  # noqa: E402
from taskflow.store.common import migrate  # noqa: E402
from taskflow.store.common.db import with_database  # noqa: E402

TEMPLATE = "bench_steps_template"
WORKFLOW = _HERE / "step_workflow.py"
SOURCES = f"{ROOT / 'examples'},{WORKFLOW}"

SEED = (
    pg.item_runs("bench-steps", "work")
    + """
INSERT INTO step (key, run, visit, state, kind, action, status, attempts, due_at,
                  created_at, updated_at)
SELECT id || ':1:step', id, 1, 'work', 'action', $3, 'cancelled', 0, now(), now(), now()
FROM runs
"""
)

#: Made due in a second, light statement (seeding takes a while): all due at once, and
#: the workers woken (as the writer of the decision that enters the state does).
ARM = (
    "UPDATE step SET status = 'due', due_at = $1::timestamptz, created_at = $1::timestamptz",
    "SELECT pg_notify('taskflow_timers', '')",
)

STATS = """
SELECT count(*) FILTER (WHERE r.status = 'completed') AS done,
       extract(epoch FROM max(r.ended_at) - (SELECT min(created_at) FROM step)) AS span
FROM run r
"""


async def seed(url: str, steps: int) -> None:
    definition = definitions.load(SOURCES.split(",")).get("bench-steps")
    action = definition.state("work").action_path
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(SEED, steps, definition.digest, action)
        await conn.execute(ARM[0], datetime.now(UTC))
        await conn.execute(ARM[1])
    finally:
        await conn.close()


async def stats(url: str) -> asyncpg.Record:
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(STATS)
        assert row is not None
        return row
    finally:
        await conn.close()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds these processes have used so far (Linux ``/proc``; a
    process that is gone, or not on this machine, counts nothing)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


async def backends(url: str) -> list[int]:
    """The process ids of the database server's backends serving this database (their CPU
    is counted when the server runs on this machine, as the embedded one does)."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return [r["pid"] for r in rows]
    finally:
        await conn.close()


async def wait_done(url: str, steps: int, limit: float) -> asyncpg.Record:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        row = await stats(url)
        if row["done"] == steps:
            return row
        await asyncio.sleep(0.5)
    raise SystemExit(f"bench: runs still waiting after {limit:.0f}s")


# -- the raw SQL loop ----------------------------------------------------------------------------

#: The timeline lines a completed automatic step writes in taskflow.
TIMELINE = ("step.succeeded", "state.exited", "run.transitioned", "state.entered", "run.completed")
RESULT = json.dumps({"ok": True})


async def _raw_loop(url: str, batch: int, stop_after: float) -> None:
    conn = await asyncpg.connect(url)
    deadline = time.monotonic() + stop_after
    try:
        while time.monotonic() < deadline:
            now = datetime.now(UTC)
            async with conn.transaction():
                rows = await conn.fetch(
                    "SELECT st.id, st.run FROM step st JOIN run r ON r.id = st.run "
                    "WHERE st.status = 'due' AND st.due_at <= $1 ORDER BY st.due_at, st.id "
                    "LIMIT $2 FOR NO KEY UPDATE OF r FOR UPDATE OF st SKIP LOCKED",
                    now,
                    batch,
                )
                if rows:
                    steps = await conn.fetch(
                        "UPDATE step SET status = 'succeeded', attempts = 1, result = $3::jsonb, "
                        "ended_at = $2, updated_at = $2 WHERE id = ANY($1::bigint[]) "
                        "RETURNING id",
                        [r["id"] for r in rows],
                        now,
                        RESULT,
                    )
                    await conn.execute(
                        "INSERT INTO step_attempt (step, attempt, worker, started_at, "
                        "finished_at, outcome, duration_ms) "
                        "SELECT s, 1, 'raw', $2, $2, 'succeeded', 0 FROM unnest($1::bigint[]) s",
                        [s["id"] for s in steps],
                        now,
                    )
                    await conn.executemany(
                        "UPDATE run SET state = 'done', status = 'completed', visit = visit + 1, "
                        "step_results = jsonb_build_object('work', $3::jsonb), ended_at = $2, "
                        "updated_at = $2, version = version + 1 WHERE id = $1",
                        [(r["run"], now, RESULT) for r in rows],
                    )
                    await conn.executemany(
                        "INSERT INTO audit_event (run, kind, details, at) "
                        "VALUES ($1, $2, $3::jsonb, $4)",
                        [
                            (r["run"], k, pg.line_details(k, "done"), now)
                            for r in rows
                            for k in TIMELINE
                        ],
                    )
            if not rows:
                await asyncio.sleep(0.05)
    finally:
        await conn.close()


def raw_process(url: str, batch: int, stop_after: float) -> None:
    asyncio.run(_raw_loop(url, batch, stop_after))


# -- a round -------------------------------------------------------------------------------------


#: (steps per second, CPU seconds per 10 000 steps of the processes, of their database backends)
Round = tuple[float, float, float]


async def round_raw(admin_url: str, steps: int, workers: int, args: argparse.Namespace) -> Round:
    url = await pg.fresh_database(admin_url, "bench_steps_raw", TEMPLATE)
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=raw_process, args=(url, args.batch, args.timeout))
        for _ in range(workers)
    ]
    for p in procs:
        p.start()
    await asyncio.sleep(1.0)
    pids = [p.pid for p in procs if p.pid is not None]
    return await _measured(url, steps, pids, args, procs_stop=lambda: _stop_raw(procs))


async def _stop_raw(procs: list[multiprocessing.process.BaseProcess]) -> None:
    for p in procs:
        p.terminate()
        p.join()


async def _measured(
    url: str,
    steps: int,
    pids: list[int],
    args: argparse.Namespace,
    procs_stop: Callable[[], Awaitable[None]],
) -> Round:
    """Seed the steps, wait until every run completed: the rate and the CPU spent."""
    serving = await backends(url)
    await seed(url, steps)
    before = cpu_seconds(pids), {pid: cpu_seconds([pid]) for pid in serving}
    try:
        row = await wait_done(url, steps, args.timeout)
        # Backends opened since (pools open connections as they need them) count from 0.
        serving = sorted(set(serving) | set(await backends(url)))
        db = sum(cpu_seconds([pid]) - before[1].get(pid, 0.0) for pid in serving)
        cpu = cpu_seconds(pids) - before[0], db
    finally:
        await procs_stop()
    per = 10_000 / steps
    return steps / max(float(row["span"]), 1e-9), cpu[0] * per, cpu[1] * per


async def round_taskflow(
    admin_url: str, steps: int, workers: int, args: argparse.Namespace, automations: int = 0
) -> Round:
    url = await pg.fresh_database(admin_url, "bench_steps_taskflow", TEMPLATE)
    if automations:
        await automation_load.publish(url, "bench-steps", automations, args.automation_condition)
    env = {
        **os.environ,
        "TASKFLOW_DATABASE_URL": url,
        "TASKFLOW_SECRET_KEYS": "bench-signing-key-0123456789abcdef0123456789",
        "TASKFLOW_WORKFLOWS": SOURCES,
    }
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            *_profiled(args.profile, workers, i),
            "-m",
            "taskflow",
            "worker",
            "--batch",
            str(args.batch),
            env=env,
            cwd=ROOT,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for i in range(workers)
    ]
    await asyncio.sleep(3.0)  # let them start and LISTEN

    async def stop() -> None:
        if automations:
            print(f"    ({await automation_load.progress(url, automations)})", flush=True)
        for p in procs:
            p.terminate()
        for p in procs:
            await asyncio.wait_for(p.wait(), 30)

    return await _measured(url, steps, [p.pid for p in procs], args, stop)


def _profiled(folder: str | None, workers: int, i: int) -> list[str]:
    """The interpreter's arguments that run a worker under cProfile (none: not profiled)."""
    if folder is None:
        return []
    Path(folder).mkdir(parents=True, exist_ok=True)
    return ["-m", "cProfile", "-o", str(Path(folder) / f"worker-{workers}-{i}.prof")]


async def main(args: argparse.Namespace) -> None:
    admin_url = os.environ.get("TASKFLOW_BENCH_DATABASE_URL")
    server = None
    if admin_url is None:
        from taskflow.store.common import embedded

        server = embedded.EmbeddedPostgres(Path("/tmp/tfbench-steps"))
        admin_url = server.url()
    try:
        await pg.admin(
            admin_url,
            f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)",
            f"CREATE DATABASE {TEMPLATE}",
        )
        await migrate.migrate(with_database(admin_url, TEMPLATE))
        print(
            f"{args.steps} automatic steps due at once, batch {args.batch}; {os.cpu_count()} CPUs"
        )
        print(
            f"{'workers':>7}  {'raw /s':>9}  {'taskflow /s':>11}  {'ratio':>6}"
            "   CPU s per 10 000 steps: raw (its db)  taskflow (its db)"
        )
        for workers in args.workers:
            raw, raw_cpu, raw_db = await round_raw(admin_url, args.steps, workers, args)
            ours, our_cpu, our_db = await round_taskflow(admin_url, args.steps, workers, args)
            print(
                f"{workers:>7}  {raw:>9.0f}  {ours:>11.0f}  {ours / raw:>6.2f}"
                f"  {raw_cpu:>28.2f} ({raw_db:.2f})  {our_cpu:>8.2f} ({our_db:.2f})",
                flush=True,
            )
            if args.automations:
                busy, busy_cpu, busy_db = await round_taskflow(
                    admin_url, args.steps, workers, args, args.automations
                )
                print(
                    f"{'':>7}  with {args.automations} automations: {busy:>8.0f} /s, "
                    f"{busy / ours:.2f} of without; CPU {busy_cpu:.2f} ({busy_db:.2f})",
                    flush=True,
                )
    finally:
        if server is not None:
            server.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds to give up.")
    parser.add_argument(
        "--profile", metavar="DIR", help="Run each worker under cProfile, its stats in DIR."
    )
    automation_load.add_arguments(parser)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
