"""Idempotency keys: one row per (actor, operation, key) with the first answer.

The row is locked by a transaction-level advisory lock on the key (taken on a
connection of ``Database.keys``, held while the use case runs), written in the
transaction of the mutation's effect (``mark_effect``, through
``db.BEFORE_COMMIT``) and completed with the answer afterwards (``record``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from taskflow.store.common import db, sql

#: The statements of ``common/idempotency.sql``.
SQL = sql.statements("common/idempotency")


class Scope(NamedTuple):
    """Whose key, for which operation, and the fingerprint of the input it came with, in the
    order the statements take them (``*scope``)."""

    actor: str
    operation: str
    key: str
    fingerprint: str

    @property
    def names(self) -> tuple[str, str, str]:
        """What names the row: (actor, operation, key)."""
        return self.actor, self.operation, self.key

    @property
    def lock_text(self) -> str:
        return "\x1f".join(("idempotency", *self.names))


@dataclass(frozen=True)
class Stored:
    fingerprint: str
    #: None while only the effect is known (its answer was never recorded).
    answer: dict[str, Any] | None
    created_at: datetime


async def lock(conn: db.Connection, scope: Scope) -> None:
    """Wait for any other request with the same key to finish (until ``conn`` commits)."""
    await conn.execute(SQL["lock"], scope.lock_text)


async def find(conn: db.Connection, scope: Scope) -> Stored | None:
    row = await conn.fetchrow(SQL["find"], *scope.names)
    if row is None:
        return None
    answer = row["answer"]
    if isinstance(answer, str):
        answer = json.loads(answer)
    return Stored(row["fingerprint"], answer, row["created_at"])


async def mark_effect(conn: db.Connection, scope: Scope, now: datetime) -> bool:
    """In a transaction about to commit: write the key when it changed something.

    Returns whether it did. A transaction that wrote nothing has no transaction id yet.
    """
    wrote = await conn.fetchval(SQL["wrote"])
    if not wrote:
        return False
    await conn.execute(SQL["mark_effect"], *scope, now)
    return True


async def record(conn: db.Connection, scope: Scope, answer: dict[str, Any], now: datetime) -> None:
    """Store the answer to give again (creating the row when no effect wrote it)."""
    await conn.execute(SQL["record"], *scope, answer, now)


async def forget(conn: db.Connection, scope: Scope) -> None:
    """Drop one expired key (found again after its retention)."""
    await conn.execute(SQL["forget"], *scope.names)


async def prune(conn: db.Connection, before: datetime, limit: int = 1000) -> int:
    """Delete up to ``limit`` keys created before ``before``; how many went."""
    deleted = await conn.fetchval(
        SQL["prune"],
        before,
        limit,
    )
    return int(deleted)
