"""A worker batch's reads and writes, set-based: one statement per table for the whole batch.

The worker fires up to a batch of timers in one transaction (see
``service/timer_batch.py``). Loading the batch's runs, their timers, and
writing what the firings changed each take one statement for the whole batch
(arrays bound as parameters, ``unnest`` on the server), so the round trips do
not grow with the number of firings. Ids and JSON travel as text and are cast on
the server: cheaper on both sides than ``uuid[]`` and ``jsonb[]`` parameters.
What the firings decided is written by
the one writer every use case uses (``unit_of_work.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

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
