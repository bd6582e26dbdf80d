"""History at an instant: ``runs(filter: {stateAt})`` and ``stateCounts`` on a large dataset.

    pip install -e '.[bench]' && python bench/history.py [--runs N] [--repeat R]

Generates N runs (default 1 M) of 20 workflows over 90 days, each through three states
(``submitted`` -> ``legal_review`` -> ``done``, a tenth cancelled in legal review), as
state spans (the rows the timeline's trigger keeps), then times, beside each other: the runs
list's stateAt statement (its fragment, as the list composes it, counted) and the raw
aggregate over the spans (``state_at_raw``), and ``stateCounts``'s statement. Prints the
median ms and the plan's top line (EXPLAIN) of each. Budget: stateAt filter <= 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Run as a script, this folder would come first on sys.path (bench/calendar.py would shadow
# the standard library's calendar module): drop it, and make the repository importable.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402

from bench import pg  # noqa: E402
from taskflow.store.common import db, migrate, sql  # noqa: E402
from taskflow.store.history import spans  # noqa: E402

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
FRAGMENTS = sql.statements("common/fragments")

GENERATE = """
INSERT INTO subject (id, type, external_id)
SELECT md5('s' || g)::uuid, 'doc', 'D-' || g FROM generate_series(1, $1) g;
INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state, status,
                 started_at, state_entered_at, updated_at)
SELECT md5('r' || g)::uuid, 'wf-' || (g % 20), 1, 'x', md5('s' || g)::uuid, 'done', 'completed',
       $2::timestamptz - (g % 7776000) * interval '1 second', now(), now()
FROM generate_series(1, $1) g;
"""
SPANS = """
INSERT INTO state_span (run, workflow, state, entered_at, left_at, line)
SELECT r.id, r.workflow, s.state, r.started_at + s.starts * interval '1 hour',
       CASE WHEN s.ends IS NULL THEN 'infinity'
            WHEN s.state = 'legal_review' AND hashtext(r.id::text) % 10 = 0
            THEN r.started_at + interval '30 hours'
            ELSE r.started_at + s.ends * interval '1 hour' END, 0
FROM run r, (VALUES ('submitted', 0, 20), ('legal_review', 20, 68), ('done', 68, NULL))
            AS s(state, starts, ends)
WHERE NOT (s.state = 'done' AND hashtext(r.id::text) % 10 = 0)
"""


#: "Which runs were in legal review last Friday at 17:00" (a Friday of the data's 90 days).
AT = datetime(2026, 11, 27, 17, 0, tzinfo=UTC)


def state_at_cases() -> list[tuple[str, str, tuple[Any, ...]]]:
    """The statements timed, each with its arguments: the runs list's stateAt statement (its
    fragment as the list composes it, counted), the raw aggregate, and stateCounts's."""
    text = "\n".join(ln for ln in FRAGMENTS["run_state_at"].splitlines() if not ln.startswith("--"))
    fragment = text.replace("$?", "$1", 1).replace("$?", "$2", 1).replace("$?", "$3")
    listed = "SELECT count(*) FROM run r WHERE r.workflow = $1 AND " + fragment
    return [
        ("runs(filter: {stateAt}) statement", listed, ("wf-3", "legal_review", AT)),
        ("raw aggregate (state_at_raw)", spans.STATE_AT_RAW, ("wf-3", "legal_review", AT)),
        ("stateCounts", spans.SQL["state_counts"], ("wf-3", AT)),
    ]


async def timed(conn: asyncpg.Connection, text: str, args: tuple[Any, ...], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        await conn.fetch(text, *args)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


async def run(admin_url: str, runs: int, repeat: int, plans: bool) -> None:
    admin = await asyncpg.connect(admin_url)
    await admin.execute("DROP DATABASE IF EXISTS bench_history WITH (FORCE)")
    await admin.execute("CREATE DATABASE bench_history")
    await admin.close()
    url = db.with_database(admin_url, "bench_history")
    await migrate.migrate(url)
    conn = await asyncpg.connect(url)
    try:
        t = time.perf_counter()
        async with conn.transaction():
            subjects, runs_insert = GENERATE.strip().split(";\n")
            await conn.execute(subjects, runs)
            await conn.execute(runs_insert.rstrip(";"), runs, NOW)
            await conn.execute(SPANS)
        await conn.execute("VACUUM ANALYZE state_span")
        await conn.execute("VACUUM ANALYZE run")
        count = await conn.fetchval("SELECT count(*) FROM state_span")
        print(f"{runs} runs, {count} spans generated in {time.perf_counter() - t:.0f} s")
        for name, text, args in state_at_cases():
            ms = await timed(conn, text, args, repeat)
            plan = await conn.fetch("EXPLAIN " + text, *args)
            print(f"{name:38} {ms:8.1f} ms   {plan[0][0][:70]}")
            if plans:
                full = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + text, *args)
                print("\n".join(r[0] for r in full))
    finally:
        await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--plans", action="store_true", help="print EXPLAIN ANALYZE in full")
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-history")
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    args = parser.parse_args()
    pg.serve_postgres(
        args.admin_url, args.data_dir, lambda url: run(url, args.runs, args.repeat, args.plans)
    )


if __name__ == "__main__":
    main()
