"""Webhook delivery: ``taskflow worker`` processes against a raw httpx loop, same requests.

    python bench/delivery.py [--events 20000] [--workers 1,4] [--concurrency 32]
                             [--paced 5000] [--rate 500]

A template database is migrated and seeded once: an enabled endpoint pointing at a
local receiver, ``--events`` runs and one ``run.started`` timeline line each, which
the outbox trigger turns into as many events and deliveries. Every round copies the
template, so all rounds send the very same outbox rows.

- **taskflow**: N ``taskflow worker`` processes (each sends ``--concurrency`` at once).
  The endpoint is disabled while they start, then enabled; they take, sign, send and
  record every delivery.
- **raw httpx loop**, the baseline, in the same run: N processes read the same outbox
  rows (each a slice), build the same body and ``standardwebhooks`` signatures, and POST
  them with httpx, ``--concurrency`` at once: no lease, no bookkeeping.

Deliveries per second are counted by the receiver (a uvicorn process answering 204):
events / (last request - first request). Then a **paced** round: a feeder writes
``--paced`` timeline lines at ``--rate`` per second while one worker (and then N) runs;
lateness is the receiver's arrival time minus the event's ``occurredAt`` (p50, p99).
The database: ``TASKFLOW_BENCH_DATABASE_URL`` (an admin URL), else an embedded
PostgreSQL in ``/tmp/tfbench-delivery``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import standardwebhooks  # noqa: E402

from bench import pg  # noqa: E402
from taskflow.api import asgi  # noqa: E402
from taskflow.core.delivery import webhook_events  # noqa: E402
from taskflow.service.delivery import webhooks  # noqa: E402
from taskflow.store.common import migrate  # noqa: E402
from taskflow.store.common.db import with_database  # noqa: E402

TEMPLATE = "bench_delivery_template"
SECRET = webhooks.new_secret()

SEED = """
WITH subjects AS (
    INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
    SELECT gen_random_uuid(), 'ticket', 'D-' || g, '{}'::jsonb, 1, now(), now()
    FROM generate_series(1, $1) g
    RETURNING id
), runs AS (
    INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                     visit, started_at, state_entered_at, updated_at, version)
    SELECT gen_random_uuid(), 'support-ticket', 1, 'bench', id, 'triage', 'active', 1,
           now(), now(), now(), 1
    FROM subjects
    RETURNING id
)
INSERT INTO audit_event (run, kind, actor, details, at)
SELECT id, 'run.started', 'helpdesk', '{}'::jsonb, $2::timestamptz FROM runs
"""

ROWS = """
SELECT d.id AS delivery, v.id, v.type, v.kind, v.run, v.slot, v.slot_name, v.workflow,
       v.workflow_version, v.subject_type, v.subject_external_id, v.actor, v.reason, v.details,
       v.occurred_at, e.url, e.secret
FROM webhook_delivery d JOIN outbox_event v ON v.id = d.event
JOIN webhook_endpoint e ON e.id = d.endpoint
WHERE d.id % $1 = $2 ORDER BY d.id
"""


# -- the receiver --------------------------------------------------------------------------------


class Stats:
    """What the receiver saw: arrival instants and lateness per first copy of each id."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.ids: set[str] = set()
        self.requests = 0
        self.lateness: list[float] = []

    def note(self, headers: dict[str, str], body: bytes) -> None:
        now = time.time()
        self.requests += 1
        self.first = now if self.first is None else self.first
        self.last = now
        msg = headers.get("webhook-id", "")
        if msg in self.ids:
            return
        self.ids.add(msg)
        occurred = json.loads(body)["data"]["occurredAt"]
        self.lateness.append(now - datetime.fromisoformat(occurred).timestamp())


STATS = Stats()


async def receiver_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await asgi.read_body(receive)
    if body is None:
        return
    answer = b""
    if scope["path"] == "/stats":
        lat = sorted(STATS.lateness)
        answer = json.dumps(
            {
                "requests": STATS.requests,
                "unique": len(STATS.ids),
                "first": STATS.first,
                "last": STATS.last,
                "p50": lat[len(lat) // 2] if lat else None,
                "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else None,
            }
        ).encode()
    elif scope["path"] == "/reset":
        STATS.reset()
    else:
        STATS.note({k.decode(): v.decode() for k, v in scope["headers"]}, body)
    await send({"type": "http.response.start", "status": 200 if answer else 204, "headers": []})
    await send({"type": "http.response.body", "body": answer})


def serve_receiver(port: int) -> None:
    import uvicorn

    uvicorn.run(receiver_app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


def reset(base: str) -> None:
    httpx.post(f"{base}/reset", timeout=10)


def stats(base: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{base}/stats", timeout=10).json()
    return found


# -- the raw loop --------------------------------------------------------------------------------


async def _raw(url: str, slices: int, index: int, concurrency: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.set_type_codec(
            "jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
        )
        rows = await conn.fetch(ROWS, slices, index)
    finally:
        await conn.close()
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:

        async def one(r: asyncpg.Record) -> None:
            event = webhook_events.Event(
                id=r["id"],
                type=r["type"],
                kind=r["kind"],
                run_id=str(r["run"]),
                slot_id=None,
                slot_name=None,
                workflow=r["workflow"],
                workflow_version=r["workflow_version"],
                subject_type=r["subject_type"],
                subject_external_id=r["subject_external_id"],
                actor=r["actor"],
                reason=r["reason"],
                details=r["details"],
                occurred_at=r["occurred_at"],
            )
            body = webhook_events.body(event)
            msg = webhook_events.message_id(event.id)
            at = datetime.now(UTC)
            signature = standardwebhooks.Webhook(r["secret"]).sign(msg, at, body)
            headers = {
                "webhook-id": msg,
                "webhook-timestamp": str(int(at.timestamp())),
                "webhook-signature": signature,
                "content-type": "application/json",
            }
            async with gate:
                answer = await client.post(r["url"], content=body.encode(), headers=headers)
                assert 200 <= answer.status_code < 300

        await asyncio.gather(*(one(r) for r in rows))


def raw_process(url: str, slices: int, index: int, concurrency: int) -> None:
    asyncio.run(_raw(url, slices, index, concurrency))


def round_raw(admin_url: str, workers: int, args: argparse.Namespace, base: str) -> float:
    url = asyncio.run(pg.fresh_database(admin_url, "bench_delivery_raw", TEMPLATE))
    reset(base)
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=raw_process, args=(url, workers, i, args.concurrency))
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return _rate(stats(base), args.events, "raw")


# -- taskflow workers ----------------------------------------------------------------------------


def _env(url: str, args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "TASKFLOW_DATABASE_URL": url,
        "TASKFLOW_SECRET_KEYS": "bench-signing-key-0123456789abcdef0123456789",
        "TASKFLOW_WEBHOOK_ALLOW_PRIVATE": "true",
        "TASKFLOW_WEBHOOK_CONCURRENCY": str(args.concurrency),
        "TASKFLOW_LOG_FORMAT": "text",
    }


async def _workers(url: str, count: int, args: argparse.Namespace) -> list[Any]:
    return [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "taskflow",
            "worker",
            env=_env(url, args),
            cwd=ROOT,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for _ in range(count)
    ]


async def _stop(procs: list[Any]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        await asyncio.wait_for(p.wait(), 20)


async def _wait(base: str, n: int, limit: float) -> None:
    deadline = time.monotonic() + limit
    while stats(base)["unique"] < n:
        assert time.monotonic() < deadline, f"only {stats(base)['unique']} of {n} delivered"
        await asyncio.sleep(0.1)


async def round_taskflow(
    admin_url: str, workers: int, args: argparse.Namespace, base: str
) -> float:
    url = await pg.fresh_database(admin_url, "bench_delivery_taskflow", TEMPLATE)
    await pg.admin(url, "UPDATE webhook_endpoint SET enabled = false")
    await asyncio.to_thread(reset, base)
    procs = await _workers(url, workers, args)
    await asyncio.sleep(3.0)  # let them start and LISTEN
    await pg.admin(url, "UPDATE webhook_endpoint SET enabled = true")
    try:
        await _wait(base, args.events, args.timeout)
    finally:
        await _stop(procs)
    return _rate(stats(base), args.events, "taskflow")


async def round_paced(
    admin_url: str, workers: int, args: argparse.Namespace, base: str
) -> tuple[float, float]:
    url = await pg.fresh_database(admin_url, "bench_delivery_paced", TEMPLATE)
    await pg.admin(url, "DELETE FROM webhook_delivery", "DELETE FROM outbox_event")
    await asyncio.to_thread(reset, base)
    procs = await _workers(url, workers, args)
    await asyncio.sleep(3.0)
    conn = await asyncpg.connect(url)
    try:
        runs = [r["id"] for r in await conn.fetch("SELECT id FROM run LIMIT $1", args.paced)]
        tick = 0.05
        per_tick = max(1, int(args.rate * tick))
        started = time.monotonic()
        for i in range(0, len(runs), per_tick):
            chunk = runs[i : i + per_tick]
            await conn.execute(
                "INSERT INTO audit_event (run, kind, actor, details, at) "
                "SELECT r, 'slot.opened', NULL, '{}'::jsonb, clock_timestamp() "
                "FROM unnest($1::uuid[]) r",
                chunk,
            )
            pause = started + (i // per_tick + 1) * tick - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
        await _wait(base, len(runs), args.timeout)
    finally:
        await conn.close()
        await _stop(procs)
    found = stats(base)
    return float(found["p50"]), float(found["p99"])


def _rate(found: dict[str, Any], events: int, label: str) -> float:
    assert found["unique"] == events, f"{label}: {found['unique']} of {events} arrived"
    return events / max(found["last"] - found["first"], 1e-9)


async def prepare(admin_url: str, args: argparse.Namespace, receiver_url: str) -> None:
    await pg.admin(
        admin_url,
        f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)",
        f"CREATE DATABASE {TEMPLATE}",
    )
    url = with_database(admin_url, TEMPLATE)
    await migrate.migrate(url)
    await pg.admin(
        url,
        # The endpoint's owner must exist and may receive every workflow: an admin.
        "WITH owner AS (INSERT INTO principal (id, display_name, roles, groups) "
        "VALUES ('bench', 'Bench', ARRAY['admin'], '{}')) "
        "INSERT INTO webhook_endpoint (id, url, enabled, secret, created_by) "
        "VALUES ($1, $2, true, $3, 'bench')",
        args=(uuid.uuid4(), receiver_url, SECRET),
    )
    await pg.admin(url, SEED, args=(args.events, datetime.now(UTC)))


# -- what the outbox trigger costs the writers ----------------------------------------------------

COST_LINES = """
INSERT INTO audit_event (run, kind, actor, details, at)
SELECT r, k, 'bench', '{}'::jsonb, now()
FROM unnest($1::uuid[]) r, unnest(ARRAY['slot.claimed', 'clock.met', 'slot.pinged']) k
"""


async def outbox_cost(admin_url: str, statements: int) -> list[tuple[str, float]]:
    """Microseconds per timeline write (one statement of three lines) in four setups."""
    url = await pg.fresh_database(admin_url, "bench_delivery_cost", TEMPLATE)
    conn = await asyncpg.connect(url)
    try:
        runs = [r["id"] for r in await conn.fetch("SELECT id FROM run LIMIT 1")]
        setups = [
            ("no trigger", "ALTER TABLE audit_event DISABLE TRIGGER audit_event_outbox", None),
            ("trigger, no endpoint enabled", "ALTER TABLE audit_event ENABLE TRIGGER ALL", False),
            (
                "trigger, an endpoint of another workflow",
                "UPDATE webhook_endpoint SET workflows = ARRAY['vendor-onboarding']",
                True,
            ),
            (
                "trigger, a subscribed endpoint (writes 2 events, 2 deliveries)",
                "UPDATE webhook_endpoint SET workflows = '{}'",
                True,
            ),
        ]
        # Inside one transaction per measure (no commit flush per statement: the trigger's own
        # work shows), the four setups in turn, five rounds; the median per setup.
        times: dict[str, list[float]] = {label: [] for label, _, _ in setups}
        for _ in range(5):
            for label, setup, enabled in setups:
                await conn.execute(setup)
                if enabled is not None:
                    await conn.execute("UPDATE webhook_endpoint SET enabled = $1", enabled)
                async with conn.transaction():
                    for _ in range(100):  # warm up
                        await conn.execute(COST_LINES, runs)
                    started = time.perf_counter()
                    for _ in range(statements):
                        await conn.execute(COST_LINES, runs)
                    times[label].append((time.perf_counter() - started) / statements * 1e6)
        found = [(label, sorted(t)[len(t) // 2]) for label, t in times.items()]
        return found
    finally:
        await conn.close()


def main(args: argparse.Namespace) -> None:
    admin_url = os.environ.get("TASKFLOW_BENCH_DATABASE_URL")
    server = None
    if admin_url is None:
        from taskflow.store.common import embedded

        server = embedded.EmbeddedPostgres(Path("/tmp/tfbench-delivery"))
        admin_url = server.url()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    receiver = multiprocessing.get_context("spawn").Process(target=serve_receiver, args=(port,))
    receiver.start()
    try:
        for _ in range(100):
            try:
                stats(base)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        asyncio.run(prepare(admin_url, args, f"{base}/hooks"))
        if args.outbox_cost:
            print(
                f"a timeline write of 3 lines, median of 5 means of {args.outbox_cost} statements:"
            )
            for label, us in asyncio.run(outbox_cost(admin_url, args.outbox_cost)):
                print(f"  {label:<66} {us:>7.0f} us", flush=True)
            return
        print(f"{args.events} events, concurrency {args.concurrency}; {os.cpu_count()} CPUs")
        print(f"{'workers':>7}  {'raw /s':>8}  {'taskflow /s':>11}  {'ratio':>6}")
        for workers in args.workers:
            raw = round_raw(admin_url, workers, args, base)
            ours = asyncio.run(round_taskflow(admin_url, workers, args, base))
            print(f"{workers:>7}  {raw:>8.0f}  {ours:>11.0f}  {ours / raw:>6.2f}", flush=True)
        print(f"paced: {args.paced} events at {args.rate:g}/s; lateness (receipt - occurredAt)")
        for workers in args.workers:
            p50, p99 = asyncio.run(round_paced(admin_url, workers, args, base))
            print(f"{workers:>7} worker(s): p50 {p50:.3f} s, p99 {p99:.3f} s", flush=True)
    finally:
        receiver.terminate()
        receiver.join()
        if server is not None:
            server.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4])
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--paced", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument(
        "--outbox-cost",
        type=int,
        default=0,
        metavar="N",
        help="Only measure what the outbox trigger adds to N timeline writes.",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse())
