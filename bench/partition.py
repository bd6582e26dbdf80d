"""The timeline's move to monthly partitions (migration 2026-12-04T19:00) on a populated
database: how long each step takes and how long a writer waits meanwhile.

A database is migrated up to the migration before it, ``--rows`` timeline lines are
written (spread over the last year, in batches, with the timeline's triggers off: they
are history, not news), then the migration's steps run one by one, timed, while a writer
appends one line every 10 ms and records each insert's latency: its worst wait is the
lock the migration holds (the swap's ACCESS EXCLUSIVE; the CHECK's NOT VALID instant).
Beside it, the baseline: the writer's worst latency over the same span with no migration.

    python bench/partition.py --rows 10000000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from pathlib import Path

import asyncpg

# bench/calendar.py would shadow the standard library's calendar module: drop this folder
# from sys.path, make the repository importable (as bench/timers.py does).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
if str(_HERE.parent) not in sys.path:
    sys.path.insert(0, str(_HERE.parent))

from bench import pg  # noqa: E402
from taskflow.store.common import migrate  # noqa: E402
from taskflow.store.history import partitions  # noqa: E402

NAME = "bench_partition"
MIGRATION = "2026-12-04T19:00:00:000000"
BATCH = 1_000_000


def _previous_migration() -> str:
    """The id of the migration before the partitioning one (files sort by id)."""
    ids = sorted(
        p.stem.removeprefix("taskflow_")
        for p in (Path(__file__).resolve().parent.parent / "migrations").glob("taskflow_*.py")
    )
    mine = "2026_12_04t19_00_00_000000"
    before = ids[ids.index(mine) - 1]  # e.g. 2026_12_04t17_00_00_000000
    day, clock = before.split("t")
    h, m, s, us = clock.split("_")
    return f"{day.replace('_', '-')}T{h}:{m}:{s}:{us}"


async def _populate(url: str, rows: int) -> uuid.UUID:
    conn = await asyncpg.connect(url)
    try:
        subject, run = uuid.uuid4(), uuid.uuid4()
        await conn.execute(
            "INSERT INTO subject (id, type, external_id) VALUES ($1, 'bench', 'p')", subject
        )
        await conn.execute(
            "INSERT INTO run (id, workflow, subject) VALUES ($1, 'bench', $2)", run, subject
        )
        await conn.execute("ALTER TABLE audit_event DISABLE TRIGGER USER")
        for start in range(0, rows, BATCH):
            await conn.execute(
                "INSERT INTO audit_event (run, kind, details, at) "
                "SELECT $1, 'note', '{}'::jsonb, now() - g * interval '3 seconds' "
                "FROM generate_series($2::bigint, $3::bigint) g",
                run,
                start + 1,
                min(rows, start + BATCH),
            )
        await conn.execute("ALTER TABLE audit_event ENABLE TRIGGER USER")
        await conn.execute("VACUUM ANALYZE audit_event")
        return run
    finally:
        await conn.close()


async def _writer(url: str, run: uuid.UUID, stop: asyncio.Event) -> float:
    """Append a line every 10 ms until ``stop``; the worst insert latency, in seconds."""
    conn = await asyncpg.connect(url)
    worst = 0.0
    try:
        while not stop.is_set():
            began = time.perf_counter()
            await conn.execute(
                "INSERT INTO audit_event (run, kind, details, at) "
                "VALUES ($1, 'note', '{}'::jsonb, now())",
                run,
            )
            worst = max(worst, time.perf_counter() - began)
            await asyncio.sleep(0.01)
        return worst
    finally:
        await conn.close()


async def _timed(url: str, run: uuid.UUID, steps: list[tuple[str, str]]) -> tuple[dict, float]:
    stop = asyncio.Event()
    writing = asyncio.create_task(_writer(url, run, stop))
    await asyncio.sleep(0.5)
    took: dict[str, float] = {}
    conn = await asyncpg.connect(url)
    try:
        for label, statement in steps:
            began = time.perf_counter()
            await conn.execute(statement)
            took[label] = time.perf_counter() - began
    finally:
        await conn.close()
    await asyncio.sleep(0.5)
    stop.set()
    return took, await writing


def main(args: argparse.Namespace) -> None:
    async def go(admin_url: str) -> None:
        await pg.admin(
            admin_url,
            f"DROP DATABASE IF EXISTS {NAME} WITH (FORCE)",
            f"CREATE DATABASE {NAME}",
        )
        url = pg.with_database(admin_url, NAME)
        await migrate.migrate(url, up_to=_previous_migration())
        began = time.perf_counter()
        run = await _populate(url, args.rows)
        print(f"{args.rows} timeline lines written in {time.perf_counter() - began:.1f} s")
        _, baseline = await _timed(url, run, [("idle", "SELECT pg_sleep(2)")])
        labels = ("prepare (CHECK NOT VALID)", "validate", "(id, at) concurrently", "swap")
        took, worst = await _timed(
            url, run, list(zip(labels, partitions.MIGRATION_STEPS, strict=True))
        )
        for label, seconds in took.items():
            print(f"  {label:28} {seconds * 1000:10.1f} ms")
        print(f"  total {sum(took.values()):.1f} s")
        print(
            f"writer's worst insert: {worst * 1000:.1f} ms during the migration, "
            f"{baseline * 1000:.1f} ms without (ratio {worst / max(baseline, 1e-6):.1f})"
        )
        await migrate.migrate(url)  # the rest (the function, the record), as a deploy would
        await pg.admin(admin_url, f"DROP DATABASE IF EXISTS {NAME} WITH (FORCE)")

    pg.serve_postgres(args.admin_url, args.data_dir, go)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--admin-url", default=None, help="An external PostgreSQL (admin).")
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-partition")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse())
