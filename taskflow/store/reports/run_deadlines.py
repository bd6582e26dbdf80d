"""Runs meeting and missing their run deadline, per workflow (the SLA report's
``runDeadlines``; docs/reports.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.store.common import db, sql

SQL = sql.statements("reports/run_deadlines")


@dataclass(frozen=True)
class DeadlineCounts:
    """One workflow's runs with a deadline, started in the window: met, missed, still open."""

    workflow: str
    runs: int
    met: int
    missed: int
    open: int


async def by_workflow(
    conn: db.Connection, start: datetime, end: datetime, workflows: Sequence[str], now: datetime
) -> list[DeadlineCounts]:
    """The counts of ``workflows``' runs started in ``[start, end)``, as of ``now``."""
    found = await conn.fetch(SQL["by_workflow"], start, end, list(workflows), now)
    return [DeadlineCounts(**dict(r)) for r in found]
