"""A worker batch's reads and writes, set-based: one statement per table for the whole batch.

The worker fires up to a batch of timers in one transaction (see
``service/timer_batch.py``). Loading the batch's runs, their timers, and
writing what the firings changed each take one statement for the whole batch
(arrays bound as parameters, ``unnest`` on the server), so the round trips do
not grow with the number of firings. Ids and JSON travel as text and are cast on
the server: cheaper on both sides than ``uuid[]`` and ``jsonb[]`` parameters.
The single-row writes use cases make are
in ``runs.py`` and ``deadlines.py``; these are their batch variants.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow.core.runs.model import RunView
from taskflow.store import db, locks, runs
from taskflow.store import deadlines as timers


async def take_due(
    conn: db.Connection, now: datetime, limit: int
) -> tuple[list[timers.TimerRow], dict[str, runs.RunRow]]:
    """Lock up to ``limit`` armed timers due at ``now``, oldest first, with their runs.

    The lock order (docs/architecture.md): the runs of the due timers first, then their
    live slots (in id order), then the timers. The runs are taken
    ``SKIP LOCKED`` in due order: a run locked elsewhere is skipped, never waited for
    (another worker has it, or a use case is changing it and may be about to move these
    very timers), and does not count toward ``limit``; the next pass gets it. The slots
    may be waited for (a claim-next holding one finishes without needing anything of
    ours); a timer cancelled meanwhile is left out.
    """
    due = await conn.fetch(
        """
        SELECT t.id, t.run FROM timer t JOIN run r ON r.id = t.run
        WHERE t.status = 'armed' AND t.due_at <= $1
        ORDER BY t.due_at, t.id
        LIMIT $2
        FOR NO KEY UPDATE OF r SKIP LOCKED
        """,
        now,
        limit,
    )
    if not due:
        return [], {}
    await locks.lock_live_slots(conn, sorted({str(row["run"]) for row in due}))
    found = await conn.fetch(
        f"""
        SELECT {timers.timer_columns("t_")}, {runs.RUN_COLUMNS}
        FROM timer t JOIN run r ON r.id = t.run JOIN subject s ON s.id = r.subject
        WHERE t.id = ANY($1::bigint[]) AND t.status = 'armed' AND t.due_at <= $2
        ORDER BY t.due_at, t.id
        FOR UPDATE OF t
        """,
        [row["id"] for row in due],
        now,
    )
    taken = [timers.timer_from(row, "t_") for row in found]
    return taken, {str(row["id"]): runs.run_from(row) for row in found}


async def timers_of_runs(
    conn: db.Connection, run_ids: Sequence[str]
) -> dict[str, list[timers.TimerRow]]:
    """Every timer row of these runs (slot and state timers, any status), by run."""
    found = await conn.fetch(
        f"SELECT {timers.timer_columns('t_')} FROM timer t WHERE t.run = ANY($1::text[]::uuid[])",
        list(run_ids),
    )
    by_run: dict[str, list[timers.TimerRow]] = {r: [] for r in run_ids}
    for row in found:
        timer = timers.timer_from(row, "t_")
        by_run[timer.run_id].append(timer)
    return by_run


async def update_runs(
    conn: db.Connection, changed: Sequence[tuple[RunView, int]], now: datetime
) -> None:
    """Write runs as they now are; each ``(view, writes)`` bumps the version ``writes`` times."""
    if not changed:
        return
    await conn.execute(
        """
        UPDATE run SET state = u.state, status = u.status, visit = u.visit,
                       state_entered_at = u.entered, ended_at = u.ended, updated_at = $8,
                       version = run.version + u.writes, unmatched_at = u.unmatched
        FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[],
                    $6::timestamptz[], $7::int[], $9::timestamptz[])
             AS u(id, state, status, visit, entered, ended, writes, unmatched)
        WHERE run.id = u.id::uuid
        """,
        [v.id for v, _ in changed],
        [v.state for v, _ in changed],
        [v.status for v, _ in changed],
        [v.visit for v, _ in changed],
        [v.state_entered_at for v, _ in changed],
        [v.ended_at for v, _ in changed],
        [n for _, n in changed],
        now,
        [v.unmatched_at for v, _ in changed],
    )


async def mark_breached(conn: db.Connection, marks: Sequence[tuple[str, str, datetime]]) -> None:
    """Record ``(slot, milestone, at)`` breaches (the first record of each stays)."""
    if not marks:
        return
    await conn.execute(
        """
        WITH k AS (
            UPDATE sla_clock SET breached_at = COALESCE(sla_clock.breached_at, u.at)
            FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(slot, milestone, at)
            WHERE sla_clock.slot = u.slot::uuid AND sla_clock.milestone = u.milestone
            RETURNING sla_clock.slot, sla_clock.milestone, sla_clock.breached_at
        )
        -- The slot's copy of its report clock (store/deadlines.py) keeps the breach too.
        UPDATE slot s SET sla_breached_at = k.breached_at
        FROM k WHERE s.id = k.slot AND s.sla_milestone = k.milestone
        """,
        [s for s, _, _ in marks],
        [m for _, m, _ in marks],
        [at for _, _, at in marks],
    )


async def write_timers(
    conn: db.Connection, rows: Sequence[timers.TimerRow], now: datetime, *, notify: bool
) -> None:
    """Write timer rows as they now are (new keys inserted); ``notify`` wakes sleeping workers.

    A row whose firing count went up was fired at ``now``. The NOTIFY is delivered
    at commit, like the one a use case's :class:`~taskflow.store.deadlines.DeadlineWrites` sends.
    """
    if not rows:
        return
    await conn.execute(
        """
        WITH written AS (
            INSERT INTO timer AS t (key, run, slot, kind, part, due_at, status, fired,
                                    updated_at, attempts, last_error, failed_at, planned_at)
            SELECT key, run::uuid, slot::uuid, kind, part, due_at, status, fired, $9,
                   attempts, last_error, failed_at, planned_at
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                        $6::timestamptz[], $7::text[], $8::int[], $12::int[], $13::text[],
                        $14::timestamptz[], $15::timestamptz[])
                 AS u(key, run, slot, kind, part, due_at, status, fired, attempts, last_error,
                      failed_at, planned_at)
            ON CONFLICT (key) DO UPDATE SET
                due_at = EXCLUDED.due_at, status = EXCLUDED.status, fired = EXCLUDED.fired,
                fired_at = CASE WHEN EXCLUDED.fired > t.fired THEN EXCLUDED.updated_at
                                ELSE t.fired_at END,
                attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error,
                failed_at = EXCLUDED.failed_at, planned_at = EXCLUDED.planned_at,
                updated_at = EXCLUDED.updated_at
        )
        SELECT pg_notify($10, '') WHERE $11
        """,
        [t.key for t in rows],
        [t.run_id for t in rows],
        [t.slot_id for t in rows],
        [t.kind for t in rows],
        [t.ref for t in rows],
        [t.due_at for t in rows],
        [t.status for t in rows],
        [t.fired for t in rows],
        now,
        timers.CHANNEL,
        notify,
        [t.attempts for t in rows],
        [t.last_error for t in rows],
        [t.failed_at for t in rows],
        [t.planned_at for t in rows],
    )
