"""History's move to monthly partitions on a populated database: how long each step
takes and how long a writer waits meanwhile. ``--table timeline`` (migration
2026-12-04T19:00, the timeline) or ``--table spans`` (migration 2026-12-05T02:00, the runs'
stays in their states).

A database is migrated up to the migration before it and populated: ``--rows`` timeline
lines (spread over the last year, in batches, with the timeline's triggers off: they are
history, not news), or for spans the spans of that many lines (``--rows`` / 4: a visit is
about four lines) of which ``--standing`` stand (live runs). Then the migration's steps run
one by one, timed, while a writer records each write's latency every 10 ms (a line; for
spans a ``state.entered`` line, whose trigger closes a span and opens one): its worst wait
is the lock the migration holds (the swap's ACCESS EXCLUSIVE; the CHECK's NOT VALID
instant). Beside it, the baseline: the writer's worst latency over the same span with no
migration.

    python bench/partition.py --rows 10000000
    python bench/partition.py --table spans --rows 10000000 --standing 100000
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
#: Per table: the partitioning migration's file id, its steps and their labels.
MIGRATIONS = {
    "timeline": (
        "2026_12_04t19_00_00_000000",
        partitions.MIGRATION_STEPS,
        ("prepare (CHECK NOT VALID)", "validate", "(id, at) concurrently", "swap"),
    ),
    "spans": (
        "2026_12_05t02_00_00_000000",
        partitions.SPAN_MIGRATION_STEPS,
        (
            "prepare (CHECK NOT VALID)",
            "validate",
            "(id, left_at) concurrently",
            "standing index concurrently",
            "swap",
        ),
    ),
}
BATCH = 1_000_000
#: Timeline lines per state visit, about (entered, slot lines, moves).
LINES_PER_SPAN = 4


def _previous_migration(mine: str) -> str:
    """The id of the migration before the partitioning one ``mine`` (files sort by id)."""
    ids = sorted(
        p.stem.removeprefix("taskflow_")
        for p in (Path(__file__).resolve().parent.parent / "migrations").glob("taskflow_*.py")
    )
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


async def _populate_spans(url: str, rows: int, standing: int) -> uuid.UUID:
    """The spans of ``rows`` timeline lines (``rows`` / 4), ``standing`` of them standing,
    over the last year, with their runs (one run a standing span, the closed spans spread
    over them); the run the writer moves."""
    conn = await asyncpg.connect(url)
    spans = max(rows // LINES_PER_SPAN, standing)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        await conn.execute(
            "INSERT INTO subject (id, type, external_id) "
            "SELECT gen_random_uuid(), 'bench', g::text FROM generate_series(1, $1) g",
            standing,
        )
        await conn.execute(
            "INSERT INTO run (id, workflow, subject) SELECT gen_random_uuid(), 'bench', id "
            "FROM subject WHERE type = 'bench'"
        )
        runs = [r["id"] for r in await conn.fetch("SELECT id FROM run ORDER BY id")]
        for start in range(0, spans, BATCH):
            # Span g of run g % standing; the last `standing` spans stand.
            await conn.execute(
                "INSERT INTO state_span (run, workflow, state, entered_at, left_at, line) "
                "SELECT r.ids[1 + g % $4], 'bench', 's' || (g % 7), "
                "       now() - interval '365 days' + g * ($3 / $1::float) * interval '1 second', "
                "       CASE WHEN g > $1 - $4 THEN 'infinity'::timestamptz "
                "            ELSE now() - interval '365 days' "
                "                 + (g + 1) * ($3 / $1::float) * interval '1 second' END, g "
                "FROM generate_series($5::bigint, $6::bigint) g, (SELECT $2::uuid[] AS ids) r",
                spans,
                runs,
                365 * 86400 - 86400,
                standing,
                start + 1,
                min(spans, start + BATCH),
            )
        await conn.execute("VACUUM ANALYZE state_span")
        return runs[0]
    finally:
        await conn.close()


#: What the writer writes: a line; for spans one that moves its run (the span trigger).
WRITES = {
    "timeline": "INSERT INTO audit_event (run, kind, details, at) "
    "VALUES ($1, 'note', '{}'::jsonb, now())",
    "spans": "INSERT INTO audit_event (run, kind, details, at) "
    """VALUES ($1, 'state.entered', '{"state": "s1"}'::jsonb, now())""",
}


async def _writer(url: str, run: uuid.UUID, stop: asyncio.Event, write: str) -> float:
    """Write every 10 ms until ``stop``; the worst write's latency, in seconds."""
    conn = await asyncpg.connect(url)
    worst = 0.0
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        while not stop.is_set():
            began = time.perf_counter()
            await conn.execute(write, run)
            worst = max(worst, time.perf_counter() - began)
            await asyncio.sleep(0.01)
        return worst
    finally:
        await conn.close()


async def _timed(
    url: str, run: uuid.UUID, steps: list[tuple[str, str]], write: str
) -> tuple[dict, float]:
    stop = asyncio.Event()
    writing = asyncio.create_task(_writer(url, run, stop, write))
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
        mine, steps, labels = MIGRATIONS[args.table]
        await migrate.migrate(url, up_to=_previous_migration(mine))
        began = time.perf_counter()
        if args.table == "spans":
            run = await _populate_spans(url, args.rows, args.standing)
            print(
                f"{max(args.rows // LINES_PER_SPAN, args.standing)} state spans "
                f"({args.standing} standing: live runs) written in "
                f"{time.perf_counter() - began:.1f} s"
            )
        else:
            run = await _populate(url, args.rows)
            print(f"{args.rows} timeline lines written in {time.perf_counter() - began:.1f} s")
        if args.table == "spans":  # the function the swap calls, made by the same migration
            await pg.admin(url, partitions.PARTITION_WALLS[1])
        write = WRITES[args.table]
        _, baseline = await _timed(url, run, [("idle", "SELECT pg_sleep(2)")], write)
        took, worst = await _timed(url, run, list(zip(labels, steps, strict=True)), write)
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
    parser.add_argument("--table", choices=sorted(MIGRATIONS), default="timeline")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument(
        "--standing", type=int, default=100_000, help="Spans: how many stand (live runs)."
    )
    parser.add_argument("--admin-url", default=None, help="An external PostgreSQL (admin).")
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-partition")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse())
