"""Every lookup an event or a subject makes is served by an index, never a sequential scan.

A few thousand runs, subjects and timeline lines, ANALYZEd; each statement is
EXPLAINed as the store runs it (the same SQL text, with parameters).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from taskflow.store.runs import event_buffer, subjects
from taskflow.store.runs import runs as rows
from tests.integration import plans

pytestmark = pytest.mark.anyio

RUNS = 4000
#: Tables no event or subject lookup may read from end to end.
WATCHED = {"run", "audit_event", "subject", "event_buffer"}


async def _seed(conn: asyncpg.Connection[Any]) -> None:
    await conn.execute(
        plans.seed_runs_sql(
            RUNS,
            """md5('r' || n)::uuid, (ARRAY['delivery', 'expense-approval', 'signature'])[n % 3 + 1],
               1, 'sha256:x', md5('s' || n)::uuid, 'announced',
               CASE WHEN n % 4 = 0 THEN 'completed' ELSE 'active' END, 1,
               'P-' || n, CASE WHEN n % 2 = 0 THEN 'k-' || n END, 'app',
               now() - n * interval '1 minute', now(), now(),
               CASE WHEN n % 4 = 0 THEN now() END, 1""",
        )
        + f"""
        INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
        SELECT md5('r' || (n % {RUNS} + 1))::uuid, NULL,
               (ARRAY['slot.satisfied', 'slot.claimed', 'state.entered', 'refused'])[n % 4 + 1],
               'app', 'seeded',
               CASE WHEN n % 4 = 0 THEN jsonb_build_object('idempotency_key', 'raise-' || n)
                    -- a state entered names its state, as the engine's lines do
                    WHEN n % 4 = 2 THEN jsonb_build_object('state', 'open')
                    ELSE '{{}}'::jsonb END,
               now()
        FROM generate_series(1, {RUNS * 5}) n;
        INSERT INTO event_buffer (run, event, payload, slot_name, item, actor,
                                  arrived_at, expires_at)
        SELECT md5('r' || n)::uuid, 'scanned', '{{}}'::jsonb, NULL, NULL, 'app',
               now(), now() + interval '1 day'
        FROM generate_series(1, {RUNS}, 7) n;
        ANALYZE subject; ANALYZE run; ANALYZE audit_event; ANALYZE event_buffer;
        """
    )


async def test_event_and_subject_lookups_use_indexes(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await _seed(conn)
        some_run = uuid.UUID(await conn.fetchval("SELECT md5('r' || 42)::text"))
        some_subject = uuid.UUID(await conn.fetchval("SELECT md5('s' || 42)::text"))
        lookups: dict[str, tuple[str, tuple[Any, ...]]] = {
            "subject by type and external id": (subjects.FIND, ("parcel", "P-42")),
            "live runs of a subject": (rows.SQL["live_runs_of_subject"], (some_subject,)),
            "runs by correlation key": (rows.SQL["runs_by_correlation"], ("P-42",)),
            "live run of a subject and workflow": (
                rows.SQL["live_run_for"],
                ("delivery", some_subject),
            ),
            "start by idempotency key": (
                rows.SQL["run_by_idempotency_key"],
                ("delivery", some_subject, "k-42"),
            ),
            "kept events of a run": (event_buffer.OF_RUN, (some_run,)),
            "runs with kept events past their time": (
                event_buffer.EXPIRED_RUNS,
                (datetime.now(UTC) - timedelta(hours=1), 100),
            ),
        }
        for name, (sql, args) in lookups.items():
            plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + sql, *args))
            scans = plans.scans(plan)
            seq = [rel for node, rel in scans if node == "Seq Scan" and rel in WATCHED]
            assert not seq, f"{name}: sequential scan of {seq}: {scans}"
            assert any(rel in WATCHED for _, rel in scans), f"{name}: {scans}"
    finally:
        await conn.close()
