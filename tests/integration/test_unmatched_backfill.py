"""Upgrading: runs that already wait after an unmatched route are found by the migration.

The database is taken back to before ``run.unmatched_at`` existed, given a run
whose current state logged ``route.unmatched`` and one whose line belongs to a
state it has left, then migrated forward as ``taskflow migrate`` does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from taskflow.store.common import migrate

pytestmark = pytest.mark.anyio

ID = "2026-12-01T19:11:00:000000"
ENTERED = datetime(2026, 11, 30, 9, tzinfo=UTC)


async def test_the_migration_marks_runs_already_waiting_on_an_unmatched_route(
    database_url: str,
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("DELETE FROM migration WHERE name = $1 RETURNING 1", ID)
        for index in ("run_unmatched", "run_active_updated", "timer_failing",
                      "slot_breached_unheld", "principal_inactive"):  # fmt: skip
            await conn.execute(f"DROP INDEX {index}")
        await conn.execute("ALTER TABLE run DROP COLUMN unmatched_at")
        await conn.execute(
            """
            INSERT INTO subject (id, type, external_id) VALUES
                (md5('s1')::uuid, 'case', 'C-1'), (md5('s2')::uuid, 'case', 'C-2');
            INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                             status, visit, state_entered_at)
            VALUES (md5('waits')::uuid, 'triage', 1, 'x', md5('s1')::uuid, 'intake', 'active',
                    1, '2026-11-30T09:00:00Z'),
                   (md5('moved')::uuid, 'triage', 1, 'x', md5('s2')::uuid, 'big', 'active',
                    2, '2026-11-30T09:00:00Z');
            INSERT INTO audit_event (run, kind, at) VALUES
                (md5('waits')::uuid, 'route.unmatched', '2026-11-30T10:00:00Z'),
                (md5('waits')::uuid, 'route.unmatched', '2026-11-30T11:00:00Z'),
                (md5('moved')::uuid, 'route.unmatched', '2026-11-30T08:00:00Z');
            """
        )
    finally:
        await conn.close()

    await migrate.migrate(database_url)

    conn = await asyncpg.connect(database_url)
    try:
        found = dict(
            await conn.fetch(
                "SELECT id::text, unmatched_at FROM run WHERE id IN "
                "(md5('waits')::uuid, md5('moved')::uuid) ORDER BY id"
            )
        )
        waits = await conn.fetchval("SELECT md5('waits')::uuid::text")
        moved = await conn.fetchval("SELECT md5('moved')::uuid::text")
        assert found == {waits: ENTERED + timedelta(hours=1), moved: None}
    finally:
        await conn.close()
