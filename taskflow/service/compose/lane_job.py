"""What the child lane acts with on one row (service/compose/children.py): the row, its
locked parent, the transaction and the instant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.runs.model import AuditEntry
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.store.common import db
from taskflow.store.compose import children as rows
from taskflow.store.runs import runs as run_rows

#: Who acts when the engine resumes or cancels a run for its child or parent.
SYSTEM = "system"


@dataclass(frozen=True)
class Job:
    """One row to act on, with what every step of it needs: the parent's run is locked."""

    services: Services
    conn: db.Connection
    parent: run_rows.RunRow
    row: rows.ChildRow
    now: datetime

    def entry(self, kind: str, reason: str, **details: Any) -> AuditEntry:
        """A timeline line of the system's, now."""
        return AuditEntry(kind, self.now, SYSTEM, None, reason, details)

    async def line(self, run_id: str, kind: str, reason: str, **details: Any) -> None:
        """A timeline line of the system's on ``run_id`` (the parent, or the child after it)."""
        await persist.audit(self.conn, run_id, self.entry(kind, reason, **details))

    async def settle(self, outcome: Mapping[str, Any] | None) -> None:
        await rows.settled(self.conn, self.row.id, outcome, self.now)
