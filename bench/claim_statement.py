"""The statement ``claimNext`` sends against the bare claim, in one process: latency and
PostgreSQL's planning and execution times (EXPLAIN ANALYZE), under each plan cache mode.

    python bench/claim_statement.py --data-dir /tmp/bench-inbox [--calls 200]

Needs the database a ``bench/inbox.py`` run kept (``bench_inbox`` on the same embedded data
dir). Each call runs in a transaction rolled back, so every call finds the same open slots;
each principal is the caller the server knows (its row's digest checked in the statement,
as ``claimNext`` does for a caller it authenticated before). To measure another
checkout's statements on the same data, copy this file into that checkout's bench folder
(the figures of bench/README.md, "claimNext: the writes in a function").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, and bench/calendar.py would
# shadow the standard library's calendar module: drop it, make the repository importable.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
if str(_HERE.parent) not in sys.path:
    sys.path.insert(0, str(_HERE.parent))

import asyncpg  # noqa: E402

from bench.claim_profile import load_inbox  # noqa: E402
from taskflow import clock  # noqa: E402
from taskflow.core.definition import audience as au  # noqa: E402
from taskflow.core.slots.filters import SlotFilter  # noqa: E402
from taskflow.service.common import container  # noqa: E402
from taskflow.store.access import principals as principal_rows  # noqa: E402
from taskflow.store.common import db, embedded  # noqa: E402
from taskflow.store.slots import claims  # noqa: E402

MODES = ("auto", "force_custom_plan", "force_generic_plan")


async def measure(url: str, settings: Any, calls: int) -> None:
    database = await db.Database.connect(url, min_size=1, max_size=1)
    try:
        services = container.build(database, settings, clock.SystemClock())
        facts = services.catalog.claim_facts
        async with database.connection() as conn:
            ids = [r["id"] for r in await conn.fetch("SELECT id FROM principal ORDER BY id")]
            checked = {i: await principal_rows.get_checked(conn, i) for i in ids}
    finally:
        await database.close()
    print(f"{'plan_cache_mode':20} {'statement':10} {'p50 ms':>7} {'planning':>9} {'execution':>9}")
    for mode in MODES:
        conn = await asyncpg.connect(url, server_settings={"plan_cache_mode": mode})
        rng = random.Random(1)
        took: dict[str, list[float]] = {"bare": [], "claimNext": []}
        plans: dict[str, list[tuple[float, float]]] = {"bare": [], "claimNext": []}
        try:
            for call in range(calls):
                principal_id = rng.choice(ids)
                found = checked[principal_id]
                assert found is not None
                principal, digest = found
                keys = sorted(au.principal_keys(principal))
                now = clock.SystemClock().now()
                statements = {
                    "bare": claims.claim_next_statement(
                        principal_id, keys, SlotFilter(), now, context=False
                    ),
                    "claimNext": claims.claim_next_plain_statement(
                        principal_id, keys, SlotFilter(), now, facts, digest
                    ),
                }
                for name, (text, args) in statements.items():
                    took[name].append(await _rolled_back(conn, text, args))
                    if call % 10 == 0:
                        plans[name].append(await _explained(conn, text, args))
        finally:
            await conn.close()
        for name, ms in took.items():
            planning = statistics.median(p for p, _ in plans[name])
            execution = statistics.median(e for _, e in plans[name])
            print(
                f"{mode:20} {name:10} {statistics.median(ms[10:]):7.3f} "
                f"{planning:9.3f} {execution:9.3f}"
            )


async def _rolled_back(conn: asyncpg.Connection[Any], text: str, args: list[Any]) -> float:
    """Milliseconds ``text`` took, in a transaction then rolled back."""
    work = conn.transaction()
    await work.start()
    try:
        began = time.perf_counter()
        await conn.fetchrow(text, *args)
        return (time.perf_counter() - began) * 1000
    finally:
        await work.rollback()


async def _explained(
    conn: asyncpg.Connection[Any], text: str, args: list[Any]
) -> tuple[float, float]:
    """PostgreSQL's planning and execution milliseconds for ``text`` (rolled back)."""
    work = conn.transaction()
    await work.start()
    try:
        plan = await conn.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + text, *args)
    finally:
        await work.rollback()
    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]
    return float(top["Planning Time"]), float(top["Execution Time"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-inbox")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    inbox = load_inbox(_HERE, "bench_inbox")
    handle = embedded.EmbeddedPostgres(Path(args.data_dir))
    try:
        url = db.with_database(handle.url(), inbox.Options.database)
        asyncio.run(measure(url, inbox.settings_for(url), args.calls))
    finally:
        handle.stop()


if __name__ == "__main__":
    main()
