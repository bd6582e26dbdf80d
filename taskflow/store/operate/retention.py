"""Pruning ended runs: one batch of one workflow in the caller's transaction.

The batch's runs are locked (``FOR UPDATE SKIP LOCKED``: the lock order starts at
the run, and nothing else writes an ended run), the report measures of their
opened slots are copied to ``pruned_slot``, the runs are deleted (their slots,
clocks, timeline, timers, notifications, magic links and kept events go by
cascade), then subjects no run tracks any more; a ``prune`` row records the counts.
Statements: ``operate/retention.sql``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql

SQL = sql.statements("operate/retention")


@dataclass(frozen=True)
class Pruned:
    """What one batch removed."""

    workflow: str
    runs: int
    slots: int = 0
    timeline: int = 0
    notifications: int = 0
    links: int = 0
    timers: int = 0
    subjects: int = 0


async def prune_batch(
    conn: db.Connection,
    *,
    workflow: str,
    before: datetime,
    retention_days: int,
    limit: int,
    now: datetime,
) -> Pruned:
    """Prune up to ``limit`` runs of ``workflow`` that ended before ``before`` (call in a
    transaction); a batch that found none records nothing."""
    due = await conn.fetch(SQL["due_runs"], workflow, before, limit)
    if not due:
        return Pruned(workflow, 0)
    ids = [r["id"] for r in due]
    subjects = list({r["subject"] for r in due})
    counted = await conn.fetchrow(SQL["counts"], ids)
    assert counted is not None
    await conn.execute(SQL["keep_measures"], ids, now)
    await conn.execute(SQL["delete_runs"], ids)
    gone_subjects = await conn.fetchval(SQL["delete_subjects"], subjects)
    ended = [r["ended_at"] for r in due]
    done = Pruned(
        workflow,
        runs=len(ids),
        slots=int(counted["slots"]),
        timeline=int(counted["timeline"]),
        notifications=int(counted["notifications"]),
        links=int(counted["links"]),
        timers=int(counted["timers"]),
        subjects=int(gone_subjects),
    )
    await conn.fetchval(
        SQL["record"],
        now,
        workflow,
        retention_days,
        min(ended),
        max(ended),
        done.runs,
        done.slots,
        done.timeline,
        done.notifications,
        done.links,
        done.timers,
        done.subjects,
    )
    return done


async def due_count(conn: db.Connection, *, workflow: str, before: datetime) -> int:
    """How many runs of ``workflow`` a prune at cutoff ``before`` would take, in all."""
    return int(await conn.fetchval(SQL["due_count"], workflow, before))
