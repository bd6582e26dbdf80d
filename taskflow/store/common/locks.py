"""The lock order's own statements (docs/architecture.md, "Lock order").

Every writer of a run takes the run's row, then the live slots it decides on,
before it reads what it decides on; claim-next alone takes just its one slot
(``claims.py``). The run is locked ``FOR NO KEY UPDATE``: writers of one run go
in turn, while the key-share lock that inserting a timeline line, a slot, a
clock or a timer takes on its run (through the foreign key) never waits for it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from taskflow.store.common import db, sql

#: The statements of ``common/locks.sql``.
SQL = sql.statements("common/locks")


async def lock_run(conn: db.Connection, run_id: str) -> bool:
    """Take the run's row lock, the first lock of every writer (docs/architecture.md,
    "Lock order"); False when there is no such run.

    ``FOR NO KEY UPDATE``: writers of one run go in turn, while the key-share lock that
    inserting a timeline line (or a clock, a timer) takes on its run never waits for it.
    """
    found = await conn.fetchval(SQL["lock_run"], uuid.UUID(run_id))
    return bool(found)


async def lock_live_slots(conn: db.Connection, run_ids: Sequence[str]) -> None:
    """Lock the live slots of these (locked) runs, in id order: the second step of the lock
    order. A claim-next holding one of them finishes first (it needs nothing the run's
    writer holds), so what is read next is what it left; while they are held, claim-next
    passes them over."""
    await conn.execute(SQL["lock_live_slots"], [uuid.UUID(r) for r in run_ids])
