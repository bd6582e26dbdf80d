"""Child runs: parents awaiting ten children each, end to end through ``taskflow worker``,
beside a raw SQL loop doing the same fan-out rows.

    python bench/compose.py [--parents 1000] [--batch 100] [--timeout 1800]

A migrated template is seeded with ``--parents`` runs of ``bench-parent``
(``bench/compose_workflow.py``) waiting in their state, each with its ten ``run_child``
rows ``starting``, as the decision that enters the state writes them. Two rounds, each on
a copy of the template:

- **taskflow**: one ``taskflow worker`` starts every child (its run, its timeline lines,
  its automatic step), runs the children's steps, notes their ends (the trigger) and
  resumes each parent once, which then completes;
- **raw**: one process, a SQL loop doing the fan-out rows in one transaction per batch:
  take ``starting`` rows ``SKIP LOCKED``, insert each child's subject (a subject per
  child, as the seeded rows name: one live run per subject and workflow) and run, mark
  the rows ``live``,
  write the two timeline lines a start writes (``child.started``, ``run.parent``).

- **lane**: the child lane alone, in this process (``service/compose/children.run_due``
  until nothing is due, no worker): the same starts without the children's steps and the
  parents' resumes running beside them, as the raw loop has none.

Prints the fan-out throughput of each (children started per second, first to last start)
and their ratios to raw, and for taskflow the parent's resume after its last child ended
(p50, p99: the parent's end minus its last child's end). The database:
``TASKFLOW_BENCH_DATABASE_URL`` (an admin URL), else an embedded PostgreSQL in
``/tmp/tfbench-compose``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import asyncpg

# bench/calendar.py would shadow the standard library's calendar module (which holidays
# imports) if this folder stayed first on sys.path; drop it, make the repository importable.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import pg  # noqa: E402
from bench.compose_workflow import CHILDREN  # noqa: E402
from taskflow.service.versions import definitions  # noqa: E402
from taskflow.store.common import migrate  # noqa: E402
from taskflow.store.common.db import with_database  # noqa: E402

TEMPLATE = "bench_compose_template"
SOURCES = f"{ROOT / 'examples'},{_HERE / 'compose_workflow.py'}"

SEED = (
    pg.item_runs("bench-parent", "waiting")
    + """
INSERT INTO run_child (key, parent, visit, state, label, workflow, awaited, status, subject,
                       created_at, updated_at)
SELECT r.id || ':1:c' || c, r.id, 1, 'waiting', 'c' || c, 'bench-child', true, 'starting',
       jsonb_build_object('external_id', r.id || '-c' || c, 'attributes', '{}'::jsonb),
       now(), now()
FROM runs r CROSS JOIN generate_series(0, $3 - 1) c
"""
)

FANOUT = """
SELECT count(*) AS n, extract(epoch FROM max(r.started_at) - min(r.started_at)) AS span
FROM run r WHERE r.workflow = 'bench-child'
"""

#: Per parent: its end minus its last child's end (seconds).
RESUMES = """
SELECT extract(epoch FROM p.ended_at - max(c.ended_at)) AS lag
FROM run p JOIN run_child rc ON rc.parent = p.id JOIN run c ON c.id = rc.child
WHERE p.workflow = 'bench-parent' AND p.status = 'completed'
GROUP BY p.id, p.ended_at
"""


async def seed(url: str, parents: int) -> None:
    digest = definitions.load(SOURCES.split(",")).get("bench-parent").digest
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(SEED, parents, digest, CHILDREN)
    finally:
        await conn.close()


async def _count(url: str, sql: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(sql))
    finally:
        await conn.close()


async def wait_for(url: str, sql: str, want: int, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if await _count(url, sql) >= want:
            return
        await asyncio.sleep(0.5)
    raise SystemExit(f"bench: not done after {limit:.0f}s ({sql.strip()})")


async def fanout(url: str) -> float:
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow(FANOUT)
        assert row is not None
        return float(row["n"]) / max(float(row["span"] or 0.0), 1e-9)
    finally:
        await conn.close()


# -- the raw SQL loop ----------------------------------------------------------------------------


#: The child's run.started and state.entered details, as a start writes them.
STARTED = json.dumps({"version": 1, "workflow": "bench-child"})
ENTERED = json.dumps({"via": "start", "state": "work"})


async def _raw_loop(url: str, digest: str, batch: int, action: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        while True:
            async with conn.transaction():
                rows = await conn.fetch(
                    "SELECT rc.id, rc.parent, rc.label, rc.subject->>'external_id' AS external "
                    "FROM run_child rc "
                    "JOIN run p ON p.id = rc.parent WHERE rc.status = 'starting' "
                    "ORDER BY rc.id LIMIT $1 FOR NO KEY UPDATE OF p FOR UPDATE OF rc SKIP LOCKED",
                    batch,
                )
                if not rows:
                    return
                subjects = await conn.fetch(
                    "INSERT INTO subject (id, type, external_id, attributes, version, "
                    "created_at, updated_at) SELECT gen_random_uuid(), 'item', e, '{}', 1, "
                    "now(), now() FROM unnest($1::text[]) WITH ORDINALITY u(e, n) ORDER BY n "
                    "RETURNING id",
                    [r["external"] for r in rows],
                )
                started = await conn.fetch(
                    "INSERT INTO run (id, workflow, definition_version, definition_digest, "
                    "subject, state, status, visit, started_at, state_entered_at, updated_at, "
                    "version, started_by) SELECT gen_random_uuid(), 'bench-child', 1, $2, s, "
                    "'work', 'active', 1, now(), now(), now(), 2, 'system' "
                    "FROM unnest($1::uuid[]) s "
                    "RETURNING id",
                    [s["id"] for s in subjects],
                    digest,
                )
                children = [s["id"] for s in started]
                await conn.execute(
                    "UPDATE run_child rc SET status = 'live', child = u.child, updated_at = now() "
                    "FROM unnest($1::bigint[], $2::uuid[]) u(id, child) WHERE rc.id = u.id",
                    [r["id"] for r in rows],
                    children,
                )
                # The lines a start writes, in one statement (as the lane's writer does): the
                # parent's child.started, the child's run.started, state.entered (its state
                # span, by the trigger) and run.parent.
                lines = []
                for r, c in zip(rows, children, strict=True):
                    label, parent = r["label"], r["parent"]
                    started = {"label": label, "child_run": str(c), "child_workflow": "bench-child"}
                    link = {"label": label, "parent_run": str(parent), "workflow": "bench-parent"}
                    why = f"started by bench-parent run {parent} as {label!r}"
                    lines += [
                        (parent, "child.started", "system",
                         f"started child {label!r}: bench-child run {c}", json.dumps(started)),
                        (c, "run.started", None, None, STARTED),
                        (c, "state.entered", None, "the run started", ENTERED),
                        (c, "run.parent", "system", why, json.dumps(link)),
                    ]  # fmt: skip
                await conn.execute(
                    "INSERT INTO audit_event (run, kind, actor, reason, details, at) "
                    "SELECT (l->>0)::uuid, l->>1, l->>2, l->>3, (l->>4)::jsonb, now() "
                    "FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY a(l, n) ORDER BY n",
                    json.dumps([[str(line[0]), *line[1:]] for line in lines]),
                )
                # The child's automatic step, due at once (as the start's writes enqueue it).
                await conn.execute(
                    "INSERT INTO step (key, run, visit, state, kind, action, status, attempts, "
                    "counted_from, due_at, created_at, updated_at) "
                    "SELECT c || ':1:step', c, 1, 'work', 'action', $2, 'due', 0, 0, now(), "
                    "now(), now() FROM unnest($1::uuid[]) c",
                    children,
                    action,
                )
    finally:
        await conn.close()


def raw_process(url: str, digest: str, batch: int, action: str) -> None:
    asyncio.run(_raw_loop(url, digest, batch, action))


async def round_raw(admin_url: str, args: argparse.Namespace) -> float:
    url = await pg.fresh_database(admin_url, "bench_compose_raw", TEMPLATE)
    child = definitions.load(SOURCES.split(",")).get("bench-child")
    action = child.state("work").action_path
    proc = multiprocessing.get_context("spawn").Process(
        target=raw_process, args=(url, child.digest, args.batch, action)
    )
    proc.start()
    proc.join(args.timeout)
    if proc.is_alive():
        proc.terminate()
        raise SystemExit("bench: the raw loop did not finish")
    return await fanout(url)


async def round_lane(admin_url: str, args: argparse.Namespace) -> float:
    url = await pg.fresh_database(admin_url, "bench_compose_lane", TEMPLATE)
    os.environ.update(_worker_env(url))
    from taskflow.cli import runtime
    from taskflow.config import config
    from taskflow.service.compose import children

    async with runtime.services(config.load(), url, apply_migrations=False) as services:
        while await children.run_due(services, args.batch):
            pass
    return await fanout(url)


def _worker_env(url: str) -> dict[str, str]:
    return {
        "TASKFLOW_DATABASE_URL": url,
        "TASKFLOW_SECRET_KEYS": "bench-signing-key-0123456789abcdef0123456789",
        "TASKFLOW_WORKFLOWS": SOURCES,
    }


async def round_taskflow(admin_url: str, args: argparse.Namespace) -> tuple[float, list[float]]:
    url = await pg.fresh_database(admin_url, "bench_compose_taskflow", TEMPLATE)
    env = {**os.environ, **_worker_env(url)}
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "taskflow",
        "worker",
        "--batch",
        str(args.batch),
        env=env,
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=open(args.worker_log, "ab") if args.worker_log else asyncio.subprocess.DEVNULL,  # noqa: ASYNC230, SIM115
    )
    try:
        done = "SELECT count(*) FROM run WHERE workflow = 'bench-parent' AND status = 'completed'"
        await wait_for(url, done, args.parents, args.timeout)
    finally:
        worker.terminate()
        await asyncio.wait_for(worker.wait(), 30)
    conn = await asyncpg.connect(url)
    try:
        lags = sorted(float(r["lag"]) for r in await conn.fetch(RESUMES))
    finally:
        await conn.close()
    return await fanout(url), lags


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def main(args: argparse.Namespace) -> None:
    admin_url = os.environ.get("TASKFLOW_BENCH_DATABASE_URL")
    server = None
    if admin_url is None:
        from taskflow.store.common import embedded

        server = embedded.EmbeddedPostgres(Path("/tmp/tfbench-compose"))
        admin_url = server.url()
    try:
        await pg.admin(
            admin_url,
            f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)",
            f"CREATE DATABASE {TEMPLATE}",
        )
        template = with_database(admin_url, TEMPLATE)
        await migrate.migrate(template)
        await seed(template, args.parents)
        print(
            f"{args.parents} parents x {CHILDREN} children, one worker, batch {args.batch}; "
            f"{os.cpu_count()} CPUs"
        )
        raw = await round_raw(admin_url, args)
        ours, lags = await round_taskflow(admin_url, args)
        lane = await round_lane(admin_url, args)
        head = ("fan-out", "raw /s", "taskflow /s", "ratio", "lane /s", "ratio")
        print("{:>8}  {:>9}  {:>11}  {:>6}  {:>8}  {:>6}".format(*head))
        print(
            f"{'':>8}  {raw:>9.0f}  {ours:>11.0f}  {ours / raw:>6.2f}  {lane:>8.0f}  "
            f"{lane / raw:>6.2f}"
        )
        print(
            f"parent resume after its last child ended ({len(lags)} parents): "
            f"p50 {pct(lags, 0.5) * 1000:.0f} ms, p99 {pct(lags, 0.99) * 1000:.0f} ms",
            flush=True,
        )
        if len(lags) != args.parents:
            raise SystemExit(f"bench: {len(lags)} of {args.parents} parents resumed")
    finally:
        if server is not None:
            server.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parents", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds to give up.")
    parser.add_argument("--worker-log", default=None, help="Append the worker's stderr here.")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
