"""The runs list is served by indexes: no sequential scan of ``run`` for its common filters.

A few thousand runs over six workflows, VACUUM ANALYZEd; each statement is EXPLAINed
as the store builds it (the same SQL text, with parameters): the page and its count.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from taskflow.core.operate.attention import Reason, Windows
from taskflow.core.runs.run_filter import RunFilter, RunReach
from taskflow.store.runs import run_list
from tests.integration import plans

pytestmark = pytest.mark.anyio

RUNS = 6000
WORKFLOWS = ("a", "b", "c", "d", "e", "f")
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


async def _seed(conn: asyncpg.Connection[Any]) -> None:
    await conn.execute(
        plans.seed_runs_sql(
            RUNS,
            f"""md5('r' || n)::uuid, (ARRAY['a', 'b', 'c', 'd', 'e', 'f'])[n % 6 + 1],
               1, 'sha256:x', md5('s' || n)::uuid,
               (ARRAY['new', 'review', 'approved', 'paid'])[n % 4 + 1],
               CASE WHEN n % 4 = 0 THEN 'completed' ELSE 'active' END, 1,
               'P-' || n, NULL, 'app',
               '{NOW.isoformat()}'::timestamptz - n * interval '1 minute', now(), now(),
               CASE WHEN n % 4 = 0
                    THEN '{NOW.isoformat()}'::timestamptz - n * interval '30 seconds' END, 1""",
        )
    )
    # Every table the statements read, as autovacuum leaves them in a running deployment
    # (an empty table never vacuumed is planned as if it had ten pages of rows).
    for table in (
        "subject",
        "run",
        "slot",
        "timer",
        "principal",
        "event_buffer",
        "step",
        "webhook_endpoint",
        "webhook_delivery",
    ):
        await conn.execute(f"VACUUM ANALYZE {table}")


async def test_the_runs_list_uses_indexes_for_its_common_filters(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    everywhere = RunReach(everywhere=True)
    lead_of_a = RunReach(
        everywhere=False,
        workflows=frozenset({"a"}),
        principal_id="leah",
        keys=frozenset({"user:leah", "role:lead"}),
    )
    hour_ago = NOW - timedelta(hours=1)
    windows = Windows(now=NOW, idle_after=timedelta(days=14), expiring_within=timedelta(hours=1))
    filters: dict[str, tuple[RunFilter, RunReach, bool]] = {
        # name: (filter, reach, count too): an unfiltered count reads every row by nature.
        "newest first": (RunFilter(), everywhere, False),
        "a workflow": (RunFilter(workflow="c"), everywhere, True),
        "a workflow's version": (RunFilter(workflow="c", version=1), everywhere, True),
        "a workflow and state": (RunFilter(workflow="c", state="review"), everywhere, True),
        "a workflow's live runs": (RunFilter(workflow="c", status=("active",)), everywhere, True),
        "a subject": (
            RunFilter(subject_type="parcel", subject_external_id="P-42"),
            everywhere,
            True,
        ),
        "a correlation key": (RunFilter(correlation_key="P-42"), everywhere, True),
        "started in the last hour": (RunFilter(started_from=hour_ago), everywhere, True),
        "ended in the last hour": (RunFilter(ended_from=hour_ago), everywhere, True),
        "a lead's workflow": (RunFilter(workflow="a"), lead_of_a, True),
        "a lead's subject": (RunFilter(subject_external_id="P-42"), lead_of_a, True),
        "needs attention": (
            RunFilter(needs_attention=True, attention_windows=windows),
            everywhere,
            True,
        ),
        "a workflow's runs needing attention for a reason": (
            RunFilter(
                workflow="c",
                needs_attention=True,
                attention_reasons=(Reason.ROUTE_UNMATCHED, Reason.IDLE),
                attention_windows=windows,
                attention_workflows=frozenset({"c"}),
            ),
            everywhere,
            True,
        ),
    }
    try:
        await _seed(conn)
        for name, (f, reach, with_count) in filters.items():
            count, page = run_list.statements(f, reach, (NOW, "0" * 32), 51)
            for sql, args in [page, count] if with_count else [page]:
                plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + sql, *args))
                scans = plans.scans(plan)
                seq = [rel for node, rel in scans if node == "Seq Scan" and rel == "run"]
                assert not seq, f"{name}: sequential scan of run: {scans}\n{sql}"
                assert any(rel == "run" for _, rel in scans), f"{name}: {scans}"
    finally:
        await conn.close()


async def test_retention_finds_a_workflows_oldest_ended_runs_by_index(database_url: str) -> None:
    from taskflow.store.common import sql

    conn = await asyncpg.connect(database_url)
    try:
        await _seed(conn)
        due = sql.statements("operate/retention")["due_runs"]
        plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + due, "c", NOW, 100))
        scans = plans.scans(plan)
        assert ("Index Scan", "run") in scans or ("Bitmap Heap Scan", "run") in scans, scans
        assert not [rel for node, rel in scans if node == "Seq Scan" and rel == "run"], scans
    finally:
        await conn.close()


async def test_bulk_operate_counts_and_takes_a_workflows_runs_by_index(database_url: str) -> None:
    from taskflow.store.operate import bulk

    conn = await asyncpg.connect(database_url)
    try:
        await _seed(conn)
        f = RunFilter(workflow="c")
        for needs in sorted(bulk.NEEDS):
            for name, limit in (("counts", None), ("take", 100)):
                everywhere = RunReach(everywhere=True)
                selection = bulk.Selection(f, everywhere, frozenset({"c"}), needs)
                text, args = bulk._statement(bulk.SQL[name], selection, None, limit)
                plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + text, *args))
                scans = plans.scans(plan)
                seq = [rel for node, rel in scans if node == "Seq Scan" and rel == "run"]
                assert not seq, f"{name} {needs}: sequential scan of run: {scans}"
    finally:
        await conn.close()
