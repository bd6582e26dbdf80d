"""SLA report: the report use case and GraphQL beside the single raw SQL aggregate, same run.

    python bench/report.py                 # the inbox benchmark's data: 1 M slots (minutes)
    python bench/report.py --scale 0.01    # a smoke run in seconds
    python bench/report.py --reuse         # keep the generated database between runs
    python bench/report.py --ending-days-ago 10   # a window of ended slots only

Generates (or reuses) the inbox benchmark's expense-approval data set
(``bench/inbox.py``) in its own database, then times, alternately and
``--repeat`` times each, over the last 90 days grouped by week and team:

- **raw aggregate**: one hand-written SQL statement over the same slots with
  the same groups, counts and p50/p90/p95 of pickup and completion in real
  time (plain subtraction): the floor for "one aggregate over these rows";
- **report statement**: the statement ``store.report_sql`` builds, sent raw
  (stored measures for ended slots; for live ones business time per slot,
  pauses, met/breached, held time from the timeline, at risk now);
- **service**: ``service.reports.sla_report`` (calendar coverage check, the
  statement, rows to values);
- **GraphQL**: the ``slaReport`` operation through the ASGI app in process;
- **at-risk list**: the manager's first page of live slots at risk now, least
  time left first, with their total (``reports.at_risk``): every live slot of
  the data set, not only the window's.

Prints medians and ratios to the raw aggregate (target: report <= 1.5x).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from taskflow import clock  # noqa: E402
from taskflow.api import app as api_app  # noqa: E402
from taskflow.core.access.principals import Grant, Principal  # noqa: E402
from taskflow.core.reports import reports  # noqa: E402
from taskflow.core.slots.filters import SlotFilter  # noqa: E402
from taskflow.service.common import container  # noqa: E402
from taskflow.service.reports import reports as report_service  # noqa: E402
from taskflow.store.common import db  # noqa: E402
from taskflow.store.reports import report_sql  # noqa: E402


def _inbox() -> Any:
    spec = importlib.util.spec_from_file_location("bench_inbox", _HERE / "inbox.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_inbox"] = module
    spec.loader.exec_module(module)
    return module


inbox = _inbox()
MANAGER = Principal(
    id="bench-manager", display_name="Bench", roles=("manager",), powers=(Grant("manager"),)
)
GROUPS = (reports.PERIOD, reports.AUDIENCE)
RAW = """
SELECT date_trunc('week', sl.opened_at AT TIME ZONE 'Europe/London') AS k_period, au.key,
       count(*) AS opened,
       count(*) FILTER (WHERE sl.status IN ('pending', 'open', 'claimed')) AS still_open,
       percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (
           ORDER BY extract(epoch FROM coalesce(sl.claimed_at, sl.satisfied_at) - sl.opened_at))
           AS pickup,
       percentile_cont(ARRAY[0.5, 0.9, 0.95]) WITHIN GROUP (
           ORDER BY extract(epoch FROM sl.satisfied_at - sl.opened_at)) AS completion
FROM slot sl
LEFT JOIN LATERAL (SELECT k AS key FROM unnest(sl.audience) k
                   WHERE k LIKE 'role:%' OR k LIKE 'group:%') au ON true
WHERE sl.opened_at >= $1 AND sl.opened_at < $2
GROUP BY 1, 2
"""
QUERY = """query($from: DateTime!, $to: DateTime) { slaReport(from: $from, to: $to,
  groupBy: [PERIOD, AUDIENCE],
  zone: "uk-london") { rows { periodLabel audience opened met breached breachRate
  pickup { business { p90 { seconds } } } completion { business { p90 { seconds } } }
  leadTime { workedShare } } } }"""


async def timed(samples: list[float], call: Awaitable[Any]) -> Any:
    started = time.perf_counter()
    result = await call
    samples.append(time.perf_counter() - started)
    return result


async def run(
    admin_url: str, scale: float, reuse: bool, repeat: int, ending_days_ago: int = 0
) -> dict[str, float]:
    options = inbox.Options(scale=scale, database="bench_report", reuse=reuse)
    url = await inbox.prepare(admin_url, options, print)
    database = await db.Database.connect(url, min_size=1, max_size=4)
    try:
        services = container.build(database, inbox.settings_for(url), clock.SystemClock())
        now = services.clock.now()
        end = now - timedelta(days=ending_days_ago)
        request = reports.ReportRequest(
            end - timedelta(days=90), end, GROUPS, None, "week", "Europe/London"
        )
        async with database.connection() as conn:
            await conn.execute("ANALYZE")
            count = await conn.fetchval(
                "SELECT count(*) FROM slot WHERE opened_at >= $1 AND opened_at < $2",
                request.start,
                request.end,
            )
        print(f"slots in the window: {count}")
        await report_service.cover(services, request.start, now)
        # The generator writes ended slots without the measures the write path stores when
        # a slot ends; store them once (kept with --reuse), as a migrated database would.
        started = time.perf_counter()
        measured = await report_service.measure_ended_slots(services)  # then VACUUM (ANALYZE)
        took = time.perf_counter() - started
        print(f"measured {measured} slots (ended; live ones' pickup) in {took:.1f} s")
        sql, args = report_sql.statement(
            request,
            now,
            report_service.workflow_calendars(services),
            report_service.day_lengths(services),
            report_service.at_risk_left(services),
        )
        samples: dict[str, list[float]] = {
            k: []
            for k in (
                "raw aggregate",
                "report statement",
                "service",
                "GraphQL (ASGI)",
                "at-risk list",
            )
        }
        app = api_app.create_app(services=services)
        token = services.staff_tokens.mint("bench-manager", now)
        async with database.connection() as conn:
            await conn.execute(
                "INSERT INTO principal (id, display_name, roles, groups) "
                "VALUES ('bench-manager', 'Bench', '{manager}', '{}') ON CONFLICT DO NOTHING"
            )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            for _ in range(repeat):
                # Each in its own transaction, as the service runs the report (run in one,
                # right after the raw aggregate, the statement came out slower than the
                # whole service in three of nine runs: bench/README.md, "Reports").
                async with database.transaction() as conn:
                    raw = await timed(
                        samples["raw aggregate"], conn.fetch(RAW, request.start, request.end)
                    )
                async with database.transaction() as conn:
                    await conn.execute(report_sql.PLANNER)
                    full = await timed(samples["report statement"], conn.fetch(sql, *args))
                rows = await timed(
                    samples["service"], report_service.sla_report(services, MANAGER, request)
                )
                answer = await timed(
                    samples["GraphQL (ASGI)"],
                    http.post(
                        "/graphql",
                        json={
                            "query": QUERY,
                            "variables": {
                                "from": request.start.isoformat(),
                                "to": request.end.isoformat(),
                            },
                        },
                        headers={"Authorization": f"Bearer {token}"},
                    ),
                )
                assert "errors" not in answer.json(), answer.json()
                await timed(
                    samples["at-risk list"],
                    report_service.at_risk(services, MANAGER, SlotFilter(), first=20, after=None),
                )
        print(f"rows: raw {len(raw)}, report {len(full)}, service {len(rows)}")
    finally:
        await database.close()
    medians = {k: statistics.median(v) for k, v in samples.items()}
    base, fastest = medians["raw aggregate"], min(samples["raw aggregate"])
    print(f"\nSLA report, last 90 days by week and team, median (and fastest) of {repeat}")
    print(f"  {'':22} {'ms':>9} {'x raw':>7} {'fastest':>9} {'x raw':>7}")
    for name, seconds in medians.items():
        best = min(samples[name])
        print(
            f"  {name:22} {seconds * 1000:9.1f} {seconds / base:7.2f} "
            f"{best * 1000:9.1f} {best / fastest:7.2f}"
        )
    return medians


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 1 M slots (default)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="reuse a generated database")
    parser.add_argument(
        "--ending-days-ago",
        type=int,
        default=0,
        help="end the 90-day window this many days ago (10: before every live run started, "
        "so every slot in it has ended)",
    )
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-report")
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    args = parser.parse_args(argv)
    print(f"taskflow report benchmark: scale {args.scale}, {os.cpu_count()} CPUs")
    go: Callable[[str], Awaitable[dict[str, float]]] = lambda url: run(  # noqa: E731
        url, args.scale, args.reuse, args.repeat, args.ending_days_ago
    )
    if args.admin_url:
        asyncio.run(go(args.admin_url))
        return
    from taskflow.store.common import embedded

    server = embedded.EmbeddedPostgres(Path(args.data_dir))
    try:
        asyncio.run(go(server.url()))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
