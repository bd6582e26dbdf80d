"""Timeline rows: the lines a run's history keeps (``audit_event``), written in order."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence

from taskflow.core.runs.model import AuditEntry
from taskflow.store import db, sql

#: The statements of ``sql/timeline.sql``.
SQL = sql.statements("timeline")


async def append_audit(conn: db.Connection, run_id: str, entries: Iterable[AuditEntry]) -> None:
    """Add lines to a run's timeline, in order (one statement)."""
    await append_audits(conn, [(run_id, e) for e in entries])


def audit_arrays(lines: Sequence[tuple[str, AuditEntry]]) -> list[list[object]]:
    """``(run id, line)`` timeline lines as the parallel arrays the statements unnest: runs,
    slots, kinds, actors, reasons, details (JSON text), instants."""
    return [
        [uuid.UUID(r) for r, _ in lines],
        [uuid.UUID(e.slot_id) if e.slot_id else None for _, e in lines],
        [e.kind for _, e in lines],
        [e.actor for _, e in lines],
        [e.reason for _, e in lines],
        [json.dumps(dict(e.details)) for _, e in lines],
        [e.at for _, e in lines],
    ]


async def append_audits(conn: db.Connection, lines: Sequence[tuple[str, AuditEntry]]) -> None:
    """Add ``(run id, line)`` timeline lines of one or many runs, in the order given."""
    if lines:
        await conn.execute(SQL["append_audits"], *audit_arrays(lines))
