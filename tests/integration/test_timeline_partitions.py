"""The timeline partitioned by month (migration 2026-12-04T19:00, docs/scaling.md)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import asyncpg
import pytest

from taskflow.store.history import partitions

pytestmark = pytest.mark.anyio

PARTITIONS = """
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'audit_event'::regclass ORDER BY 1
"""


async def _line(conn: asyncpg.Connection, at: datetime) -> int:
    """One line of the (only) run at ``at``; the line's id."""
    run = await conn.fetchval("SELECT id FROM run LIMIT 1")
    return int(
        await conn.fetchval(
            "INSERT INTO audit_event (run, kind, details, at) "
            "VALUES ($1, 'note', '{}'::jsonb, $2) RETURNING id",
            run,
            at,
        )
    )


async def test_the_timeline_is_partitioned_with_a_default(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        kind = await conn.fetchval(
            "SELECT relkind::text FROM pg_class WHERE relname = 'audit_event'"
        )
        assert kind == "p"
        names = [r["relname"] for r in await conn.fetch(PARTITIONS)]
        assert names == ["audit_event_before", "audit_event_default"]
        key = await conn.fetchval(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'audit_event'::regclass AND contype = 'p'"
        )
        assert key == "PRIMARY KEY (id, at)"
        # Row-level security and its policies came over from the table it was (workspaces).
        walls = await conn.fetch(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT array_agg(p.policyname || ':' || p.cmd || ':' || coalesce(p.qual, '') "
            "ORDER BY p.policyname) FROM pg_policies p WHERE p.tablename = c.relname) AS policies "
            "FROM pg_class c WHERE c.relname IN ('audit_event', 'audit_event_before') "
            "ORDER BY c.relname"
        )
        parent, before = walls
        assert parent["relrowsecurity"] == before["relrowsecurity"]
        assert parent["relforcerowsecurity"] == before["relforcerowsecurity"]
        assert parent["policies"] == before["policies"]
        # The id sequence belongs to the parent: dropping a month never drops it.
        owner = await conn.fetchval("SELECT pg_get_serial_sequence('audit_event', 'id')")
        assert owner == "public.audit_event_id_seq"
    finally:
        await conn.close()


async def test_months_are_made_ahead_and_take_the_default_partitions_lines(
    database_url: str,
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        subject = uuid.uuid4()
        await conn.execute(
            "INSERT INTO subject (id, type, external_id) VALUES ($1, 't', 'x')", subject
        )
        await conn.execute(
            "INSERT INTO run (id, workflow, subject) VALUES ($1, 'w', $2)", uuid.uuid4(), subject
        )
        later = datetime(2031, 5, 17, 12, tzinfo=UTC)
        line = await _line(conn, later)  # no month of 2031 yet: the default takes it
        assert await conn.fetchval("SELECT count(*) FROM audit_event_default") == 1

        made = await partitions.make_ahead(conn, datetime(2031, 4, 2, tzinfo=UTC))
        assert made == 6  # three months of the timeline and three of the state spans
        again = await partitions.make_ahead(conn, datetime(2031, 4, 2, tzinfo=UTC))
        assert again == 0
        names = [r["relname"] for r in await conn.fetch(PARTITIONS)]
        assert {"audit_event_p2031_04", "audit_event_p2031_05", "audit_event_p2031_06"} <= set(
            names
        )
        assert await conn.fetchval("SELECT count(*) FROM audit_event_default") == 0
        moved = await conn.fetchrow(
            "SELECT tableoid::regclass::text AS part, at FROM audit_event WHERE id = $1", line
        )
        assert moved["part"] == "audit_event_p2031_05"
        assert moved["at"] == later
        # A month the first partition covers is not made again.
        assert await partitions.make_ahead(conn, datetime(2020, 1, 1, tzinfo=UTC), 0) == 0
    finally:
        await conn.close()


async def test_every_partition_a_month_made_later_included_is_walled_as_its_parent(
    database_url: str,
) -> None:
    """A query naming a partition meets only the partition's own policy: the DEFAULT one and
    each month timeline_partitions() makes carry the timeline's (migration 2026-12-04T19:30)."""
    conn = await asyncpg.connect(database_url)
    try:
        made = await conn.fetchval(
            "SELECT timeline_partitions($1, 0)", datetime(2031, 3, 5, tzinfo=UTC)
        )
        assert made == 1
        walls = await conn.fetch(
            "SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity AS forced, "
            "(SELECT array_agg(p.policyname || ':' || coalesce(p.qual, '') ORDER BY 1) "
            " FROM pg_policies p WHERE p.tablename = c.relname) AS policies "
            "FROM pg_class c WHERE c.relname = 'audit_event' OR c.oid IN "
            "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'audit_event'::regclass) "
            "ORDER BY c.relname"
        )
    finally:
        await conn.close()
    names = [w["relname"] for w in walls]
    assert names == [  # the migration made the state spans' months, not the timeline's
        "audit_event",
        "audit_event_before",
        "audit_event_default",
        "audit_event_p2031_03",
    ]
    parent = walls[0]
    assert parent["forced"]
    assert parent["policies"]
    assert [(w["forced"], w["policies"]) for w in walls[1:]] == [(True, parent["policies"])] * 3
