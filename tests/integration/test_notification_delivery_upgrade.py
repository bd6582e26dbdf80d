"""Upgrading: notifications written before delivery was tracked are not mailed again.

The database is taken back to before ``notification.delivery_state`` existed and
given a notification (an outside mailer may have sent it long ago), then migrated
forward as ``taskflow migrate`` does: the old one is DEAD with a reason, and a
notification written afterwards starts PENDING.
"""

from __future__ import annotations

import asyncpg
import pytest

from taskflow.store.common import migrate

pytestmark = pytest.mark.anyio

ID = "2026-12-01T21:37:00:000000"
INSERT = """INSERT INTO notification (recipient, recipient_email, run, kind, message)
            VALUES ($1, $2, md5('r1')::uuid, 'reminder', 'Upload the documents')"""


async def test_notifications_from_before_are_dead_and_new_ones_pending(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("DELETE FROM migration WHERE name = $1 RETURNING 1", ID)
        await conn.execute("DROP INDEX notification_deliverable")
        await conn.execute(
            "ALTER TABLE notification DROP COLUMN delivery_state, DROP COLUMN attempts, "
            "DROP COLUMN last_error, DROP COLUMN lease, DROP COLUMN lease_until, "
            "DROP COLUMN retry_at, DROP COLUMN sent_at"
        )
        await conn.execute(
            """
            INSERT INTO subject (id, type, external_id) VALUES (md5('s1')::uuid, 'vendor', 'V-1');
            INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                             status, visit, state_entered_at)
            VALUES (md5('r1')::uuid, 'vendor-onboarding', 1, 'x', md5('s1')::uuid, 'collecting',
                    'active', 1, '2026-11-30T09:00:00Z');
            """
        )
        await conn.execute(INSERT, "email:old@acme.example", "old@acme.example")
    finally:
        await conn.close()

    await migrate.migrate(database_url)

    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(INSERT, "email:new@acme.example", "new@acme.example")
        found = {
            r["recipient_email"]: (r["delivery_state"], r["attempts"], r["last_error"])
            for r in await conn.fetch(
                "SELECT recipient_email, delivery_state, attempts, last_error FROM notification"
            )
        }
    finally:
        await conn.close()
    assert found["new@acme.example"] == ("pending", 0, None)
    state, attempts, error = found["old@acme.example"]
    assert (state, attempts) == ("dead", 0)
    assert "before taskflow tracked delivery" in error
