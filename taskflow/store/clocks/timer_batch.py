"""A worker batch's reads and writes, set-based: one statement per table for the whole batch.

The worker fires up to a batch of timers in one transaction (see
``service/clocks/timer_batch.py``). Loading the batch's runs, their timers, and
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

from taskflow.store.clocks import deadlines as timers
from taskflow.store.common import db, locks, sql
from taskflow.store.common.sql_builder import with_columns
from taskflow.store.runs import runs

#: The statements of ``clocks/timer_batch.sql``, their column lists filled.
SQL = with_columns(
    sql.statements("clocks/timer_batch"),
    timer_columns=timers.timer_columns("t_"),
    run_columns=runs.RUN_COLUMNS,
)


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
    due = await conn.fetch(SQL["take_due"], now, limit)
    if not due:
        return [], {}
    await locks.lock_live_slots(conn, sorted({str(row["run"]) for row in due}))
    found = await conn.fetch(SQL["lock_taken"], [row["id"] for row in due], now)
    taken = [timers.timer_from(row, "t_") for row in found]
    return taken, {str(row["id"]): runs.run_from(row) for row in found}


async def timers_of_runs(
    conn: db.Connection, run_ids: Sequence[str]
) -> dict[str, list[timers.TimerRow]]:
    """Every timer row of these runs (slot and state timers, any status), by run."""
    found = await conn.fetch(SQL["timers_of_runs"], list(run_ids))
    by_run: dict[str, list[timers.TimerRow]] = {r: [] for r in run_ids}
    for row in found:
        timer = timers.timer_from(row, "t_")
        by_run[timer.run_id].append(timer)
    return by_run
