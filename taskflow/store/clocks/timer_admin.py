"""Timer rows as an admin sees and mends them: listing, retrying and discarding dead ones.

The worker's statements are in ``timer_batch.py``; these serve the GraphQL
``timers`` list, ``Run.timers`` and the ``retryTimer`` / ``discardTimer``
mutations. A change takes the run's row lock before the timer's (the lock
order every writer follows: run, then its slots, clocks, timers).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime

from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.store.clocks import deadlines as timers
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import with_columns

_COLUMNS = timers.timer_columns("")

#: The statements of ``clocks/timer_admin.sql``, their column lists filled.
SQL = with_columns(sql.statements("clocks/timer_admin"), timer_columns=_COLUMNS)


async def listing(
    conn: db.Connection,
    *,
    statuses: Sequence[str] | None,
    run_id: str | None,
    after_id: int,
    limit: int,
    workflows: Collection[str] | None = None,
) -> tuple[list[timers.TimerRow], int]:
    """Up to ``limit`` timers after ``after_id`` in id order, and how many match in all
    (``workflows``: only timers of runs of these workflows; None: any)."""
    run_key = uuid.UUID(run_id) if run_id is not None else None
    wanted = list(statuses) if statuses is not None else None
    scope = sorted(workflows) if workflows is not None else None
    found = await conn.fetch(SQL["listing"], wanted, run_key, scope, after_id, limit)
    total = await conn.fetchval(SQL["listing_count"], wanted, run_key, scope)
    return [timers.timer_from(r) for r in found], int(total)


async def workflow_of(conn: db.Connection, timer_id: int) -> str | None:
    """The workflow of the timer's run (None: no such timer)."""
    value = await conn.fetchval(SQL["workflow_of"], timer_id)
    return None if value is None else str(value)


async def get(conn: db.Connection, timer_id: int) -> timers.TimerRow | None:
    """One timer row by id."""
    row = await conn.fetchrow(SQL["get"], timer_id)
    return timers.timer_from(row) if row else None


async def lock(conn: db.Connection, timer_id: int) -> timers.TimerRow | None:
    """The timer, locked after its run (the lock order); None when there is none."""
    run = await conn.fetchval(SQL["run_of"], timer_id)
    if run is None:
        return None
    await conn.execute(SQL["lock_run"], run)
    row = await conn.fetchrow(SQL["lock"], timer_id)
    return timers.timer_from(row) if row else None


async def rearm(conn: db.Connection, timer_id: int, now: datetime) -> timers.TimerRow:
    """Arm a timer again, due ``now``, its failures forgotten (the last error stays shown);
    NOTIFY wakes the workers at commit."""
    row = await conn.fetchrow(
        SQL["rearm"],
        timer_id,
        TimerStatus.ARMED.value,
        now,
        timers.CHANNEL,
    )
    return timers.timer_from(row)


async def set_status(
    conn: db.Connection, timer_id: int, status: TimerStatus, now: datetime
) -> timers.TimerRow:
    """Give a timer a new status (e.g. discarded)."""
    row = await conn.fetchrow(
        SQL["set_status"],
        timer_id,
        status.value,
        now,
    )
    return timers.timer_from(row)


async def reschedule(
    conn: db.Connection, timer_id: int, due_at: datetime, now: datetime
) -> timers.TimerRow:
    """Arm a timer due at ``due_at`` as if planned so, its failures forgotten (the last error
    stays shown); NOTIFY wakes the workers at commit."""
    row = await conn.fetchrow(
        SQL["reschedule"],
        timer_id,
        TimerStatus.ARMED.value,
        due_at,
        now,
        timers.CHANNEL,
    )
    return timers.timer_from(row)
