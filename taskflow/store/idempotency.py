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
from typing import Any

from taskflow.store import db


@dataclass(frozen=True)
class Scope:
    """Whose key, for which operation, and the fingerprint of the input it came with."""

    actor: str
    operation: str
    key: str
    fingerprint: str

    @property
    def lock_text(self) -> str:
        return "\x1f".join(("idempotency", self.actor, self.operation, self.key))


@dataclass(frozen=True)
class Stored:
    fingerprint: str
    #: None while only the effect is known (its answer was never recorded).
    answer: dict[str, Any] | None
    created_at: datetime


async def lock(conn: db.Connection, scope: Scope) -> None:
    """Wait for any other request with the same key to finish (until ``conn`` commits)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", scope.lock_text)


async def find(conn: db.Connection, scope: Scope) -> Stored | None:
    row = await conn.fetchrow(
        "SELECT fingerprint, answer, created_at FROM idempotency_key "
        "WHERE actor = $1 AND operation = $2 AND key = $3",
        scope.actor,
        scope.operation,
        scope.key,
    )
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
    wrote = await conn.fetchval("SELECT txid_current_if_assigned() IS NOT NULL")
    if not wrote:
        return False
    await conn.execute(
        "INSERT INTO idempotency_key (actor, operation, key, fingerprint, answer, created_at) "
        "VALUES ($1, $2, $3, $4, NULL, $5) ON CONFLICT (actor, operation, key) DO NOTHING",
        scope.actor,
        scope.operation,
        scope.key,
        scope.fingerprint,
        now,
    )
    return True


async def record(conn: db.Connection, scope: Scope, answer: dict[str, Any], now: datetime) -> None:
    """Store the answer to give again (creating the row when no effect wrote it)."""
    await conn.execute(
        "INSERT INTO idempotency_key (actor, operation, key, fingerprint, answer, created_at) "
        "VALUES ($1, $2, $3, $4, $5::jsonb, $6) ON CONFLICT (actor, operation, key) "
        "DO UPDATE SET answer = EXCLUDED.answer, fingerprint = EXCLUDED.fingerprint",
        scope.actor,
        scope.operation,
        scope.key,
        scope.fingerprint,
        answer,
        now,
    )


async def forget(conn: db.Connection, scope: Scope) -> None:
    """Drop one expired key (found again after its retention)."""
    await conn.execute(
        "DELETE FROM idempotency_key WHERE actor = $1 AND operation = $2 AND key = $3",
        scope.actor,
        scope.operation,
        scope.key,
    )


async def prune(conn: db.Connection, before: datetime, limit: int = 1000) -> int:
    """Delete up to ``limit`` keys created before ``before``; how many went."""
    deleted = await conn.fetchval(
        "WITH gone AS (DELETE FROM idempotency_key WHERE id IN (SELECT id FROM idempotency_key "
        "WHERE created_at < $1 ORDER BY created_at LIMIT $2) RETURNING 1) "
        "SELECT count(*) FROM gone",
        before,
        limit,
    )
    return int(deleted)
