"""Durable timers: ``taskflow worker`` processes against a raw SQL loop doing the same row work.

    python bench/timers.py [--timers 100000] [--workers 1,2,4] [--window 60] [--batch 100]
                           [--scheduler listen|poll] [--poll SECONDS]
                           [--kind timeout|expire] [--automations 100]

Each round gets a fresh database (a copy of a migrated template) seeded with
``--timers`` state timeouts, each on its own support-ticket run parked in
*resolved*, due spread evenly over ``--window`` seconds starting a few seconds
after the workers are up. Firing one closes its run: the worker loads the run,
decides with the engine, writes the run, its timeline and the timer, and
re-plans the run's timers. The baseline, in the same run and on the same
database server, is a raw SQL loop in as many processes: take due rows with
``FOR UPDATE SKIP LOCKED``, close their runs, write the same five timeline lines
a firing writes and retire the timers, one transaction per batch: the row work
without the engine.

``--kind expire`` seeds slot expiries instead: each run a vendor onboarding in
*collecting* with one document's upload slot open (its legal review pending after
it) and the slot's ``expire`` timer armed; firing one expires the slot, the
review can never open, so the state closes and the run ends in *expired* (the
example's route ``expired.upload > 0``). The raw loop then also writes the two
slots and the six timeline lines that firing writes.

Prints, per worker count: firings per second (timers / (last firing - first due
instant)), the ratio to the raw loop, and lateness (firing minus due instant)
p50 and p99. The database: ``TASKFLOW_BENCH_DATABASE_URL`` (an admin URL), else
an embedded PostgreSQL in ``/tmp/tfbench-timers``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
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

#: The databases' names start with this (``--prefix``: bench/scale.py and tests use their own).
PREFIX = "bench_timers"
LEAD_SECONDS = 3.0


def _seeded(subject: str, workflow: str, state: str, more: str, timers: str) -> str:
    """The seeding statement: ``$1`` subjects (``subject``: type, external id and attributes
    as SQL over ``g``), each with a run of ``workflow`` (digest ``$2``, version ``$5``) in
    ``state``, the CTEs
    ``more``, then ``timers`` (their due instants spread from ``$3`` over ``$4`` seconds)."""
    return f"""
WITH subjects AS (
    INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
    SELECT gen_random_uuid(), {subject}, 1, now(), now()
    FROM generate_series(1, $1) g
    RETURNING id
), runs AS (
    INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                     visit, started_at, state_entered_at, updated_at, version)
    SELECT gen_random_uuid(), '{workflow}', $5, $2, id, '{state}', 'active', 1,
           now(), now(), now(), 1
    FROM subjects
    RETURNING id
){more}
INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, updated_at)
{timers}
"""


#: Each timer due at ``$3`` plus its share of ``$4`` seconds.
_DUE = "$3::timestamptz + $4 * interval '1 second' * (row_number() OVER () - 1) / $1"

SEED = _seeded(
    """'ticket', 'B-' || g, '{"priority": "P3"}'::jsonb""",
    "support-ticket",
    "resolved",
    "",
    f"SELECT id || ':1:timeout:0', id, NULL, 'timeout', '0', {_DUE}, 'cancelled', 0, now() "
    "FROM runs",
)

#: ``--kind expire``: vendor runs in collecting, an open upload slot and its pending review
#: each, and the upload's expiry timer (cancelled until ARM).
SEED_EXPIRE = _seeded(
    """'vendor', 'V-' || g,
       jsonb_build_object('vendor_number', 'V-' || g, 'legal_name', 'Bench ' || g,
                          'contact_email', 'v' || g || '@bench.example',
                          'required_documents', jsonb_build_array('bank details'),
                          'handles_personal_data', false)""",
    "vendor-onboarding",
    "collecting",
    """, slots AS (
    INSERT INTO slot (id, run, visit, state, name, waits_for, item_index, item, label, status,
                      audience, deny, delegates, delegates_deny, workflow, opened_at)
    SELECT gen_random_uuid(), r.id, 1, 'collecting', s.name, s.event, s.idx, s.item,
           s.name, s.status, ARRAY['role:procurement'], '{}', '{}', '{}', 'vendor-onboarding',
           CASE WHEN s.status = 'open' THEN now() END
    FROM runs r,
         (VALUES ('upload', 'document-uploaded', 0, '"bank details"'::jsonb, 'open'),
                 ('legal_review', 'legal-reviewed', NULL, NULL, 'pending'))
         AS s(name, event, idx, item, status)
    RETURNING id, run, name
)""",
    f"SELECT id || ':expire', run, id, 'expire', '', {_DUE}, 'cancelled', 0, now() "
    "FROM slots WHERE name = 'upload'",
)

#: Seeding 100 000 runs can take longer than the lead: the timers are written cancelled (out
#: of every sight) and armed by a second, light statement whose due instants start LEAD_SECONDS
#: after it begins, so no timer is due before workers can see it.
ARM = """
UPDATE timer SET status = 'armed',
       due_at = $1::timestamptz + (due_at - (SELECT min(due_at) FROM timer))
"""

STATS = """
SELECT count(*) FILTER (WHERE status = 'fired') AS fired,
       count(*) FILTER (WHERE status = 'armed') AS armed,
       extract(epoch FROM max(fired_at) - min(due_at)) AS span,
       extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY fired_at - due_at)) AS p50,
       extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY fired_at - due_at)) AS p99
FROM timer
"""


async def seed(url: str, timers: int, window: float, kind: str = "timeout") -> None:
    workflow = "vendor-onboarding" if kind == "expire" else "support-ticket"
    found = definitions.load_from_env({}).get(workflow)
    conn = await asyncpg.connect(url)
    try:
        statement = SEED_EXPIRE if kind == "expire" else SEED
        await conn.execute(
            statement, timers, found.digest, datetime.now(UTC), window, found.version
        )
        first_due = datetime.now(UTC).timestamp() + LEAD_SECONDS
        await conn.execute(ARM, datetime.fromtimestamp(first_due, UTC))
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


async def wait_done(url: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if (await stats(url))["armed"] == 0:
            return
        await asyncio.sleep(0.5)
    raise SystemExit(f"bench: timers still armed after {limit:.0f}s")


# -- the raw SQL loop ----------------------------------------------------------------------------

#: The timeline lines a timeout that closes a run writes in taskflow; the raw loop writes as
#: many, so both do the same row work (the timeline's foreign-key checks are a large part).
TIMELINE = ("timeout.fired", "state.exited", "run.transitioned", "state.entered", "run.completed")
#: The lines a slot's expiry that ends its run writes (the slot, the review it strands).
EXPIRE_TIMELINE = (
    "slot.expired", "slot.cancelled", "state.exited", "run.transitioned", "state.entered",
    "run.completed",
)  # fmt: skip


async def _raw_loop(url: str, batch: int, stop_after: float, kind: str = "timeout") -> None:
    conn = await asyncpg.connect(url)
    deadline = time.monotonic() + stop_after
    try:
        while time.monotonic() < deadline:
            now = datetime.now(UTC)
            async with conn.transaction():
                rows = await conn.fetch(
                    "SELECT id, run FROM timer WHERE status = 'armed' AND due_at <= $1 "
                    "ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED",
                    now,
                    batch,
                )
                if rows and kind == "expire":  # the two slots close too
                    await conn.execute(
                        "UPDATE slot SET status = CASE WHEN name = 'upload' THEN 'expired' "
                        "ELSE 'cancelled' END, cancelled_at = $2, updated_at = $2, "
                        "version = version + 1 WHERE run = ANY($1::uuid[])",
                        [r["run"] for r in rows],
                        now,
                    )
                lines = EXPIRE_TIMELINE if kind == "expire" else TIMELINE
                if rows:
                    await conn.executemany(
                        "UPDATE run SET state = 'closed', status = 'completed', visit = visit + 1, "
                        "ended_at = $2, updated_at = $2, version = version + 1 WHERE id = $1",
                        [(r["run"], now) for r in rows],
                    )
                    await conn.executemany(
                        "INSERT INTO audit_event (run, kind, details, at) "
                        "VALUES ($1, $2, $3::jsonb, $4)",
                        [
                            (r["run"], line, pg.line_details(line, "closed"), now)
                            for r in rows
                            for line in lines
                        ],
                    )
                    await conn.executemany(
                        "UPDATE timer SET status = 'fired', fired = fired + 1, fired_at = $2, "
                        "updated_at = $2 WHERE id = $1",
                        [(r["id"], now) for r in rows],
                    )
            if not rows:
                await asyncio.sleep(0.05)
    finally:
        await conn.close()


def raw_process(url: str, batch: int, stop_after: float, kind: str) -> None:
    asyncio.run(_raw_loop(url, batch, stop_after, kind))


# -- a round -------------------------------------------------------------------------------------


@dataclass
class Result:
    label: str
    workers: int
    rate: float
    p50: float
    p99: float


async def round_raw(admin_url: str, timers: int, workers: int, args: argparse.Namespace) -> Result:
    url = await pg.fresh_database(admin_url, f"{args.prefix}_raw", f"{args.prefix}_template")
    budget = args.window + LEAD_SECONDS + args.timeout
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=raw_process, args=(url, args.batch, budget, args.kind))
        for _ in range(workers)
    ]
    for p in procs:
        p.start()
    await seed(url, timers, args.window, args.kind)
    await wait_done(url, budget)
    for p in procs:
        p.terminate()
        p.join()
    return _result("raw SQL loop", workers, timers, await stats(url))


async def round_taskflow(
    admin_url: str, timers: int, workers: int, args: argparse.Namespace, automations: int = 0
) -> Result:
    url = await pg.fresh_database(admin_url, f"{args.prefix}_taskflow", f"{args.prefix}_template")
    if automations:
        workflow = "vendor-onboarding" if args.kind == "expire" else "support-ticket"
        await automation_load.publish(url, workflow, automations, args.automation_condition)
    env = {
        **os.environ,
        "TASKFLOW_DATABASE_URL": url,
        "TASKFLOW_SECRET_KEYS": "bench-signing-key-0123456789abcdef0123456789",
        "TASKFLOW_SCHEDULER": args.scheduler,
        "TASKFLOW_SCHEDULER_POLL_SECONDS": str(args.poll),
    }
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
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
        for _ in range(workers)
    ]
    await asyncio.sleep(2.0)  # let them start and LISTEN
    await seed(url, timers, args.window, args.kind)
    try:
        await wait_done(url, args.window + LEAD_SECONDS + args.timeout)
        if automations:
            # Decisions made by the time the last timer fired (the lane runs beside the
            # firings), and how long the rest took.
            print(f"    ({await automation_load.progress(url, automations)})", flush=True)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            await asyncio.wait_for(p.wait(), 10)
    return _result("taskflow worker", workers, timers, await stats(url))


def _result(label: str, workers: int, timers: int, row: asyncpg.Record) -> Result:
    assert row["fired"] == timers, f"{label}: {row['fired']} of {timers} fired"
    span = max(float(row["span"]), 1e-9)
    return Result(label, workers, timers / span, float(row["p50"]), float(row["p99"]))


async def migrated_template(admin_url: str, prefix: str) -> None:
    """Make ``<prefix>_template``, the migrated database each round copies."""
    template = f"{prefix}_template"
    await pg.admin(
        admin_url,
        f"DROP DATABASE IF EXISTS {template} WITH (FORCE)",
        f"CREATE DATABASE {template}",
    )
    await migrate.migrate(with_database(admin_url, template))


def databases(prefix: str) -> tuple[str, ...]:
    """The databases a run with ``prefix`` leaves behind (to drop after a test)."""
    return tuple(f"{prefix}_{part}" for part in ("template", "raw", "taskflow"))


async def main(args: argparse.Namespace) -> None:
    admin_url = os.environ.get("TASKFLOW_BENCH_DATABASE_URL")
    server = None
    if admin_url is None:
        from taskflow.store.common import embedded

        server = embedded.EmbeddedPostgres(Path("/tmp/tfbench-timers"))
        admin_url = server.url()
    try:
        await migrated_template(admin_url, args.prefix)
        print(
            f"{args.timers} {args.kind} timers due over {args.window:g}s, batch {args.batch}, "
            f"scheduler {args.scheduler} (poll {args.poll:g}s); {os.cpu_count()} CPUs"
        )
        print(
            f"{'workers':>7}  {'raw /s':>9}  {'taskflow /s':>11}  {'ratio':>6}  "
            f"{'p50 late s':>10}  {'p99 late s':>10}  {'raw p99 s':>9}"
        )
        for workers in args.workers:
            raw = await round_raw(admin_url, args.timers, workers, args)
            ours = await round_taskflow(admin_url, args.timers, workers, args)
            print(
                f"{workers:>7}  {raw.rate:>9.0f}  {ours.rate:>11.0f}  "
                f"{ours.rate / raw.rate:>6.2f}  {ours.p50:>10.3f}  {ours.p99:>10.3f}  "
                f"{raw.p99:>9.3f}",
                flush=True,
            )
            if args.automations:
                busy = await round_taskflow(admin_url, args.timers, workers, args, args.automations)
                print(
                    f"{'':>7}  with {args.automations} automations: {busy.rate:>8.0f} /s, "
                    f"{busy.rate / ours.rate:.2f} of without; p50 {busy.p50:.3f} "
                    f"p99 {busy.p99:.3f} s late",
                    flush=True,
                )
    finally:
        if server is not None:
            server.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timers", type=int, default=100_000)
    parser.add_argument("--window", type=float, default=60.0, help="Seconds the dues span.")
    parser.add_argument(
        "--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4]
    )
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument(
        "--scheduler", choices=["listen", "poll"], default="listen", help="TASKFLOW_SCHEDULER."
    )
    parser.add_argument(
        "--poll", type=float, default=1.0, help="TASKFLOW_SCHEDULER_POLL_SECONDS (poll only)."
    )
    parser.add_argument(
        "--kind",
        choices=("timeout", "expire"),
        default="timeout",
        help="State timeouts closing runs, or slot expiries ending them (see the module doc).",
    )
    automation_load.add_arguments(parser)
    parser.add_argument("--prefix", default=PREFIX, help="The databases' names start with this.")
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="Seconds past the window to give up."
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
