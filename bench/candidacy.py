"""The whole candidate rule in SQL against the keys-only predicate it replaced, A/B interleaved.

    python bench/inbox.py --scale 0.25 --reuse    # generate (or keep) the bench database
    python bench/candidacy.py                     # then compare on it (about a minute)

On the database ``bench/inbox.py`` generated (same ``--data-dir``), for the same
random principals, call by call in alternation so that load on the machine hits
both alike:

- the inbox statement ``queries.inbox`` sends now (``candidacy.admits_sql``: keys,
  deny keys AND residual rules) against the same statement with the predicate it
  had before (keys and deny keys only; the residual rules were then checked in
  Python on the rows that came back);
- the bare claim-next statement (``claims.claim_next_statement(context=False)``)
  now against before (``AND sl.residual = '[]'``: slots with residual rules were
  never offered), each in a transaction rolled back so every call finds the same
  open slots.

Twice: on the generated data (no slot has residual rules: what the change costs
everyone), then with ``--residual`` percent of the open slots given a residual
rule (two in three a single key, as ``role & group`` compiles; one in three
``user:<id> or (role:<r> and attr:region=eu)``), inside a transaction rolled back
at the end, so the database is left as it was. Prints p50/p95 and the ratio now/before.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskflow import clock  # noqa: E402
from taskflow.core.definition import audience as au  # noqa: E402
from taskflow.core.slots.filters import SlotFilter  # noqa: E402
from taskflow.store.access import principals as principal_rows  # noqa: E402
from taskflow.store.common import db, embedded  # noqa: E402
from taskflow.store.slots import candidacy, claims, queries  # noqa: E402

PAGE = 50
NOW_PRED = candidacy.admits_sql("sl", "$2::text[]")
INBOX_BEFORE = "sl.audience && $2::text[] AND NOT sl.deny && $2::text[]"
CLAIM_BEFORE = INBOX_BEFORE + " AND sl.residual = '[]'::jsonb"


def flat(sql: str) -> str:
    """A statement on one line, its comment lines dropped and white space collapsed (the
    named statements of ``store/slots/queries.sql`` and ``claims.sql`` spread the predicate
    over lines)."""
    kept = (line for line in sql.splitlines() if not line.strip().startswith("--"))
    return " ".join(" ".join(kept).split()).replace("( ", "(").replace(" )", ")")


class Capture:
    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        self.sql, self.args = sql, args
        return []


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def inbox_sql(principal_id: str, keys: list[str]) -> tuple[str, tuple[Any, ...]]:
    capture = Capture()
    await queries.inbox(
        capture,  # type: ignore[arg-type]
        principal_id=principal_id,
        keys=keys,
        f=SlotFilter(),
        after=None,
        limit=PAGE + 1,
    )
    sql = flat(capture.sql)
    assert NOW_PRED in sql
    return sql, capture.args


async def measure(
    conn: db.Connection, people: list[tuple[str, list[str]]], calls: int, rng: random.Random
) -> dict[str, list[float]]:
    claim_now = flat(
        claims.claim_next_statement(
            "x", ["any"], SlotFilter(), clock.SystemClock().now(), context=False
        )[0]
    )
    assert NOW_PRED in claim_now
    claim_before = claim_now.replace(NOW_PRED, CLAIM_BEFORE)
    out: dict[str, list[float]] = {k: [] for k in ("inbox now", "inbox before", "claim now",
                                                   "claim before")}  # fmt: skip
    now = clock.SystemClock().now()
    for n in range(calls):
        pid, keys = rng.choice(people)
        sql, args = await inbox_sql(pid, keys)
        ways = [("inbox now", sql), ("inbox before", sql.replace(NOW_PRED, INBOX_BEFORE))]
        for name, statement in ways if n % 2 else reversed(ways):
            started = time.perf_counter_ns()
            await conn.fetch(statement, *args)
            out[name].append((time.perf_counter_ns() - started) / 1e6)
        claims_ = [("claim now", claim_now), ("claim before", claim_before)]
        for name, statement in claims_ if n % 2 else reversed(claims_):
            await conn.execute("SAVEPOINT c")
            started = time.perf_counter_ns()
            await conn.fetchrow(statement, pid, keys, now)
            out[name].append((time.perf_counter_ns() - started) / 1e6)
            await conn.execute("ROLLBACK TO SAVEPOINT c")
    return out


def report(title: str, out: dict[str, list[float]]) -> None:
    print(f"\n{title}")
    print(f"  {'':28} {'p50 ms':>8} {'p95 ms':>8} {'now/before p50':>15}")
    for what in ("inbox", "claim"):
        now, before = out[f"{what} now"], out[f"{what} before"]
        for name, values in ((f"{what} now", now), (f"{what} before", before)):
            print(f"  {name:28} {pct(values, 0.5):8.2f} {pct(values, 0.95):8.2f}", end="")
            print(f" {pct(now, 0.5) / pct(before, 0.5):15.2f}" if name.endswith("now") else "")


async def run(url: str, calls: int, residual: float, seed: int) -> None:
    database = await db.Database.connect(url, min_size=1, max_size=2)
    rng = random.Random(seed)
    try:
        async with database.connection() as conn:
            ids = [r["id"] for r in await conn.fetch("SELECT id FROM principal ORDER BY id")]
            loaded = await principal_rows.get_many(conn, ids)
            people = [(i, sorted(au.principal_keys(loaded[i]))) for i in ids]
            async with conn.transaction():
                plain = await measure(conn, people, calls, rng)
                report("generated data (no residual rules)", plain)
                # The shapes rules compile to: ``role & group`` (a single residual key), and
                # ``who.id(manager) | (role & attr)`` (a nested rule, one in three).
                changed = await conn.execute(
                    """
                    UPDATE slot SET residual = CASE WHEN hashtext(id::text) % 3 = 0
                        THEN jsonb_build_array(jsonb_build_object('any', jsonb_build_array(
                            jsonb_build_object('key', 'user:p0000' || (hashtext(id::text) & 7)),
                            jsonb_build_object('all', jsonb_build_array(
                                jsonb_build_object('key', 'role:r00' || (hashtext(id::text) & 3)),
                                jsonb_build_object('key', 'attr:region=eu'))))))
                        ELSE jsonb_build_array(
                            jsonb_build_object('key', 'role:r00' || (hashtext(id::text) & 3)))
                        END
                    WHERE status = 'open' AND random() < $1
                    """,
                    residual / 100,
                )
                await conn.execute("ANALYZE slot")
                report(
                    f"{residual:g} % of open slots with a residual rule ({changed})",
                    await measure(conn, people, calls, rng),
                )
                raise _Rollback
    except _Rollback:
        pass
    finally:
        await database.close()


class _Rollback(Exception):
    """Leaves the bench database as it was."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per way and phase")
    parser.add_argument("--residual", type=float, default=30.0, help="percent of open slots")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-inbox")
    parser.add_argument("--database", default="bench_inbox")
    args = parser.parse_args()
    server = embedded.EmbeddedPostgres(Path(args.data_dir))
    try:
        base, _, query = server.url().partition("?")
        url = base.rsplit("/", 1)[0] + f"/{args.database}" + (f"?{query}" if query else "")
        asyncio.run(run(url, args.calls, args.residual, args.seed))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
