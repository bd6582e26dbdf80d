"""Every needs-attention reason reads its own index, never a whole table.

A few thousand runs, slots, timers, principals and kept events, ANALYZEd, with
only a few of each needing attention; the list, its count and the per-reason
count are EXPLAINed as the store runs them (the same SQL text, with parameters).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from taskflow.core.operate.attention import Windows
from taskflow.store.operate import attention
from tests.integration import plans

pytestmark = pytest.mark.anyio

RUNS = 4000
#: Tables the list may not read from end to end.
WATCHED = {"run", "slot", "timer", "principal", "event_buffer", "step"}


async def _seed(conn: asyncpg.Connection[Any]) -> None:
    await conn.execute(
        f"""
        INSERT INTO principal (id, display_name, active)
        SELECT 'p' || n, 'P ' || n, n % 500 <> 2 FROM generate_series(1, 2000) n;
        INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
        SELECT md5('s' || n)::uuid, 'case', 'C-' || n, '{{}}'::jsonb, 1, now(), now()
        FROM generate_series(1, {RUNS}) n;
        INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                         status, visit, started_at, state_entered_at, updated_at, ended_at,
                         version, unmatched_at)
        SELECT md5('r' || n)::uuid, (ARRAY['triage', 'expense-approval'])[n % 2 + 1], 1,
               'sha256:x', md5('s' || n)::uuid, 'intake',
               CASE WHEN n % 4 = 0 THEN 'completed' ELSE 'active' END, 1, now(), now(),
               CASE WHEN n % 400 = 1 THEN now() - interval '30 days' ELSE now() END,
               CASE WHEN n % 4 = 0 THEN now() END, 1,
               CASE WHEN n % 300 = 1 THEN now() END
        FROM generate_series(1, {RUNS}) n;
        INSERT INTO slot (id, run, visit, state, name, waits_for, status, holder, audience,
                          deny, delegates, delegates_deny, workflow, updated_at,
                          sla_breached_at, sla_milestone)
        SELECT md5('x' || n)::uuid, md5('r' || n)::uuid, 1, 'intake', 'check', 'check',
               (ARRAY['open', 'claimed', 'satisfied', 'cancelled'])[n % 4 + 1],
               CASE WHEN n % 4 = 1 THEN 'p' || (n % 2000 + 1) END, ARRAY['role:x'],
               ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::text[],
               (ARRAY['triage', 'expense-approval'])[n % 2 + 1],
               CASE WHEN n % 400 = 1 THEN now() - interval '30 days' ELSE now() END,
               CASE WHEN n % 350 = 0 THEN now() END, 'finished'
        FROM generate_series(1, {RUNS}) n;
        INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, attempts,
                           failed_at)
        SELECT 'k' || n, md5('r' || n)::uuid, NULL, 'reminder', '0', now() + interval '1 day',
               CASE WHEN n % 9 = 0 THEN 'fired' WHEN n % 450 = 3 THEN 'dead' ELSE 'armed' END,
               0, CASE WHEN n % 250 = 7 THEN 2 ELSE 0 END,
               CASE WHEN n % 250 = 7 THEN now() END
        FROM generate_series(1, {RUNS}) n;
        INSERT INTO event_buffer (run, event, payload, actor, arrived_at, expires_at)
        SELECT md5('r' || n)::uuid, 'evidence', '{{}}'::jsonb, 'app', now(),
               now() + n * interval '1 hour'
        FROM generate_series(1, {RUNS}, 5) n;
        INSERT INTO webhook_endpoint (id, url, workflows, enabled, secret, created_by,
                                      failing_since, disabled_at, disabled_reason)
        VALUES (md5('w')::uuid, 'https://hooks.example/x', ARRAY['triage'], false, 'whsec_x',
                'ada', now() - interval '2 days', now(), 'every delivery failed');
        INSERT INTO outbox_event (type, line, kind, run, workflow, workflow_version,
                                  subject_type, subject_external_id)
        VALUES ('run.started', 1, 'run.started', md5('r1')::uuid, 'triage', 1, 't', 'x');
        INSERT INTO webhook_delivery (event, endpoint, run)
        SELECT id, md5('w')::uuid, run FROM outbox_event;
        INSERT INTO step (key, run, visit, state, kind, action, status, attempts, due_at)
        SELECT 'k' || n, r.id, r.visit, r.state, 'action', 'm:f',
               CASE WHEN n % 500 = 1 AND r.status = 'active' THEN 'parked' ELSE 'succeeded' END,
               3, now()
        FROM generate_series(1, {RUNS}) n JOIN run r ON r.id = md5('r' || n)::uuid;
        INSERT INTO run_child (key, parent, label, workflow, status, subject, outcome)
        SELECT 'k' || n || ':undo', r.id, 'step', 'undo-step', 'settled',
               '{{"compensates": "step", "attempt": 3, "compensation_attempts": 3}}'::jsonb,
               '{{"failure": "failed", "reason": "kept failing"}}'::jsonb
        FROM generate_series(1, {RUNS}, 997) n JOIN run r ON r.id = md5('r' || n)::uuid;
        INSERT INTO automation (workflow, name, status, version, author, attention,
                                attention_run)
        VALUES ('triage', 'a rule', 'published', 1, 'p1', 'stopped a loop', md5('r2')::uuid);
        ANALYZE principal; ANALYZE subject; ANALYZE run; ANALYZE slot; ANALYZE timer;
        ANALYZE event_buffer; ANALYZE step;
        """
    )


def _scans(plan: Any) -> list[tuple[str, str, str]]:
    """(node type, relation, index) of every node of a JSON plan."""
    return [
        (n["Node Type"], n.get("Relation Name", ""), n.get("Index Name", ""))
        for n in plans.nodes(plan)
    ]


async def test_each_reason_reads_its_index(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await _seed(conn)
        now = datetime.now(UTC)
        windows = Windows(
            now=now, idle_after=timedelta(days=14), expiring_within=timedelta(hours=1)
        )
        base = (windows.idle_before, windows.expiring_before, None, None)
        statements: dict[str, tuple[str, tuple[Any, ...]]] = {
            "a page": (attention.ITEMS, (*base, None, None, None, 50)),
            "a page of one workflow": (
                attention.ITEMS,
                (
                    windows.idle_before,
                    windows.expiring_before,
                    ["triage"],
                    None,
                    now,
                    "IDLE",
                    "x",
                    50,
                ),
            ),
            "the count": (attention.COUNT, base),
            "the count per reason": (attention.COUNTS, base),
        }
        for name, (sql, args) in statements.items():
            plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + sql, *args))
            scans = _scans(plan)
            seq = [rel for node, rel, _ in scans if node == "Seq Scan" and rel in WATCHED]
            assert not seq, f"{name}: sequential scan of {seq}: {scans}"
            used = {index for _, _, index in scans}
            for index in (
                "run_unmatched",
                "timer_dead",
                "timer_failing",
                "principal_inactive",
                "slot_breached_unheld",
                "run_active_updated",
                "step_parked",
            ):
                assert index in used, f"{name}: {index} unused: {scans}"
        found, total = await attention.page(
            conn, windows, workflows=None, reasons=None, after=None, limit=1000
        )
        assert total == len(found) > 0
        assert {i.reason for i in found} == set(attention.BRANCHES)
    finally:
        await conn.close()
