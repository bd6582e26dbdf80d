"""State spans partitioned by month of ``left_at`` (migration 2026-12-05T02:00,
docs/scaling.md "Partitioned history"): the layout, a span moving to the month its run left
the state, the one-standing-span rule across partitions, and the migration on a populated
table keeping every span where the reads find it."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from taskflow.store.common import db, migrate
from taskflow.store.history import partitions

pytestmark = pytest.mark.anyio

PARTITIONS = """
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'state_span'::regclass ORDER BY 1
"""
#: The migration before the partitioning one.
BEFORE = "2026-12-05T01:40:00:000000"
SPANS = (
    "SELECT run, workflow, state, entered_at, left_at, line, undone_by, workspace "
    "FROM state_span ORDER BY id"
)


def _months_ahead(n: int) -> datetime:
    """The first of the month ``n`` months after this one."""
    now = datetime.now(UTC)
    year, month = divmod(now.month - 1 + n, 12)
    return datetime(now.year + year, month + 1, 1, tzinfo=UTC)


async def _run(conn: asyncpg.Connection, workflow: str = "w") -> uuid.UUID:
    subject, run = uuid.uuid4(), uuid.uuid4()
    await conn.execute(
        "INSERT INTO subject (id, type, external_id) VALUES ($1, 't', $2)", subject, str(run)
    )
    await conn.execute(
        "INSERT INTO run (id, workflow, subject) VALUES ($1, $2, $3)", run, workflow, subject
    )
    return run


async def _line(
    conn: asyncpg.Connection, run: uuid.UUID, kind: str, at: datetime, **details: Any
) -> int:
    """A timeline line (its state-span trigger keeps the spans); its id."""
    return int(
        await conn.fetchval(
            "INSERT INTO audit_event (run, kind, details, at) VALUES ($1, $2, $3::jsonb, $4) "
            "RETURNING id",
            run,
            kind,
            json.dumps(details),
            at,
        )
    )


async def _partitioned(conn: asyncpg.Connection) -> bool:
    """Whether ``state_span`` is a partitioned table."""
    kind = await conn.fetchval("SELECT relkind::text FROM pg_class WHERE relname = 'state_span'")
    return bool(kind == "p")


async def _where(conn: asyncpg.Connection, line: int) -> list[tuple[str, datetime]]:
    rows = await conn.fetch(
        "SELECT tableoid::regclass::text AS part, left_at FROM state_span WHERE line = $1", line
    )
    return [(r["part"], r["left_at"]) for r in rows]


async def test_state_spans_are_partitioned_with_standing_spans_apart(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert await _partitioned(conn)
        names = [r["relname"] for r in await conn.fetch(PARTITIONS)]
        # The first partition covers up to the month after the migration (a day's slack);
        # the migration made the months after it up to two ahead of now.
        first = await conn.fetchval(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = $1",
            "state_span_before",
        )
        assert first.startswith("FOR VALUES FROM (MINVALUE) TO (")
        assert names[:2] == ["state_span_before", "state_span_default"]
        assert names[-1] == "state_span_standing"
        months = names[2:-1]
        assert months
        assert all(m.startswith("state_span_p") for m in months)
        assert months[-1] == f"state_span_p{_months_ahead(2):%Y_%m}"
        key = await conn.fetchval(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'state_span'::regclass AND contype = 'p'"
        )
        assert key == "PRIMARY KEY (id, left_at)"
        bound = await conn.fetchval(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = $1",
            "state_span_standing",
        )
        assert bound == "FOR VALUES FROM ('infinity') TO (MAXVALUE)"
        # Every partition is walled as its parent (workspaces' row-level security).
        walls = await conn.fetch(
            "SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity AS forced, "
            "(SELECT array_agg(p.policyname || ':' || coalesce(p.qual, '') ORDER BY 1) "
            " FROM pg_policies p WHERE p.tablename = c.relname) AS policies "
            "FROM pg_class c WHERE c.relname = 'state_span' OR c.oid IN "
            "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'state_span'::regclass) "
            "ORDER BY c.relname = 'state_span' DESC, c.relname"
        )
        parent = walls[0]
        assert parent["forced"]
        assert parent["policies"]
        assert {(w["forced"], tuple(w["policies"])) for w in walls[1:]} == {
            (True, tuple(parent["policies"]))
        }
        owner = await conn.fetchval("SELECT pg_get_serial_sequence('state_span', 'id')")
        assert owner == "public.state_span_id_seq"
    finally:
        await conn.close()


async def test_a_span_moves_to_the_month_its_run_left_the_state(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        assert await partitions.make_ahead(conn, datetime(2031, 4, 2, tzinfo=UTC)) == 6
        run = await _run(conn)
        entered = await _line(
            conn, run, "state.entered", datetime(2031, 4, 20, tzinfo=UTC), state="draft"
        )
        assert [part for part, _ in await _where(conn, entered)] == ["state_span_standing"]
        left = datetime(2031, 5, 3, 9, tzinfo=UTC)
        second = await _line(conn, run, "state.entered", left, state="review")
        assert await _where(conn, entered) == [("state_span_p2031_05", left)]
        assert [part for part, _ in await _where(conn, second)] == ["state_span_standing"]

        # The one-standing-span rule holds across partitions: a second standing span of the
        # run is refused wherever it would go.
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute(
                "INSERT INTO state_span (run, workflow, state, entered_at, left_at, line) "
                "VALUES ($1, 'w', 'x', $2, 'infinity', 0)",
                run,
                left,
            )
        # An undo of the second entry shows the first span standing again: it moves back.
        await _line(
            conn, run, "state.entered", left + timedelta(hours=1), state="draft", reverses=second
        )
        assert [part for part, _ in await _where(conn, entered)] == ["state_span_standing"]
        assert [part for part, _ in await _where(conn, second)] == ["state_span_standing"]
        undone = await conn.fetchval("SELECT undone_by FROM state_span WHERE line = $1", second)
        assert undone is not None
        # The run is cancelled: its span ends in June's partition.
        gone = datetime(2031, 6, 1, tzinfo=UTC)
        await _line(conn, run, "run.cancelled", gone)
        assert await _where(conn, entered) == [("state_span_p2031_06", gone)]
        counts = await conn.fetch(
            "SELECT state, count(*) AS n FROM state_span WHERE workflow = 'w' "
            "AND left_at > $1 AND entered_at <= $1 AND undone_by IS NULL GROUP BY state",
            datetime(2031, 5, 10, tzinfo=UTC),
        )
        assert [(c["state"], c["n"]) for c in counts] == [("draft", 1)]
    finally:
        await conn.close()


@pytest.fixture
async def unpartitioned(pg_admin_url: str) -> AsyncIterator[str]:
    """A database migrated up to the migration before state spans were partitioned."""
    name = f"spans_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(pg_admin_url)
    await admin.execute(f"CREATE DATABASE {name}")
    try:
        url = db.with_database(pg_admin_url, name)
        await migrate.migrate(url, up_to=BEFORE)
        yield url
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


async def test_the_migration_keeps_every_span_and_the_answers(unpartitioned: str) -> None:
    conn = await asyncpg.connect(unpartitioned)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        start = datetime.now(UTC) - timedelta(days=90)
        runs = [await _run(conn) for _ in range(6)]
        for i, run in enumerate(runs):
            at = start + timedelta(days=i)
            await _line(conn, run, "state.entered", at, state="draft")
            if i % 2:
                moved = await _line(
                    conn, run, "state.entered", at + timedelta(days=20), state="review"
                )
                if i == 3:  # undone: the draft span stands again, the review one undone
                    await _line(
                        conn,
                        run,
                        "state.entered",
                        at + timedelta(days=21),
                        state="draft",
                        reverses=moved,
                    )
            if i == 5:
                await _line(conn, run, "run.cancelled", at + timedelta(days=40))
        before = [tuple(r) for r in await conn.fetch(SPANS)]
        instant = start + timedelta(days=30)
        asked = (
            "SELECT state, count(*) FROM state_span WHERE workflow = 'w' AND left_at > $1 "
            "AND entered_at <= $1 AND undone_by IS NULL GROUP BY state ORDER BY state"
        )
        counts = [tuple(r) for r in await conn.fetch(asked, instant)]
        assert counts == [("draft", 4), ("review", 2)]
    finally:
        await conn.close()

    await migrate.migrate(unpartitioned)
    await migrate.migrate(unpartitioned)  # a second run finds nothing to do

    conn = await asyncpg.connect(unpartitioned)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        assert await _partitioned(conn)
        assert [tuple(r) for r in await conn.fetch(SPANS)] == before
        assert [tuple(r) for r in await conn.fetch(asked, instant)] == counts
        where = {
            (r["part"], r["standing"])
            for r in await conn.fetch(
                "SELECT tableoid::regclass::text AS part, left_at = 'infinity' AS standing "
                "FROM state_span"
            )
        }
        assert where == {("state_span_standing", True), ("state_span_before", False)}
        # The rule still holds on the migrated table, and a new entry closes the standing
        # span into its month's partition (next month: the first partition holds this one).
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute(
                "INSERT INTO state_span (run, workflow, state, entered_at, left_at, line) "
                "VALUES ($1, 'w', 'x', now(), 'infinity', 0)",
                runs[0],
            )
        line = await conn.fetchval("SELECT line FROM state_span WHERE run = $1", runs[0])
        later = _months_ahead(1) + timedelta(days=3)
        await _line(conn, runs[0], "state.entered", later, state="review")
        assert await _where(conn, line) == [(f"state_span_p{later:%Y_%m}", later)]
    finally:
        await conn.close()


async def _moving(url: str, run: uuid.UUID, stop: asyncio.Event) -> int:
    """Move ``run`` from state to state as a use case does (its row locked and updated, then
    its line) until ``stop``; how many moves committed."""
    conn = await asyncpg.connect(url)
    moves = 0
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        while not stop.is_set():
            async with conn.transaction():
                await conn.execute("SELECT 1 FROM run WHERE id = $1 FOR UPDATE", run)
                await conn.execute("UPDATE run SET state = $2 WHERE id = $1", run, f"s{moves}")
                await _line(conn, run, "state.entered", datetime.now(UTC), state=f"s{moves}")
            moves += 1
            await asyncio.sleep(0.002)
        return moves
    finally:
        await conn.close()


async def test_the_migration_runs_while_runs_move(unpartitioned: str) -> None:
    """Writers lock a run, update it and write its line (the span trigger) while the
    migration runs: the swap locks what they lock in their order, so both go through;
    every move has its span and each run one standing span."""
    conn = await asyncpg.connect(unpartitioned)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        runs = [await _run(conn) for _ in range(4)]
        for run in runs:
            await _line(conn, run, "state.entered", datetime.now(UTC), state="first")
    finally:
        await conn.close()
    stop = asyncio.Event()
    writers = [asyncio.create_task(_moving(unpartitioned, run, stop)) for run in runs]
    await asyncio.sleep(0.2)
    await migrate.migrate(unpartitioned)
    await asyncio.sleep(0.2)
    stop.set()
    moves = await asyncio.gather(*writers)
    assert all(moves)

    conn = await asyncpg.connect(unpartitioned)
    try:
        await conn.execute("SET taskflow.workspace = '*'")
        assert await _partitioned(conn)
        spans = {
            r["run"]: (r["spans"], r["standing"])
            for r in await conn.fetch(
                "SELECT run, count(*) AS spans, count(*) FILTER (WHERE left_at = 'infinity') "
                "AS standing FROM state_span GROUP BY run"
            )
        }
        assert spans == {run: (n + 1, 1) for run, n in zip(runs, moves, strict=True)}
    finally:
        await conn.close()
