"""Timeline rows: the lines a run's history keeps (``audit_event``), written in order."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from taskflow.core.runs.model import AuditEntry
from taskflow.store import db, sql

#: The statements of ``sql/timeline.sql``.
SQL = sql.statements("timeline")


async def append_audit(conn: db.Connection, run_id: str, entries: Iterable[AuditEntry]) -> None:
    """Add lines to a run's timeline, in order (one statement)."""
    await append_audits(conn, [(run_id, e) for e in entries])


def audit_arrays(lines: Sequence[tuple[str, AuditEntry]]) -> list[list[object]]:
    """``(run id, line)`` timeline lines as the parallel arrays the statements unnest: runs,
    slots (ids as text: the statements cast them), kinds, actors, reasons, details (JSON
    text), instants."""
    return [
        [r for r, _ in lines],
        [e.slot_id or None for _, e in lines],
        [e.kind for _, e in lines],
        [e.actor for _, e in lines],
        [e.reason for _, e in lines],
        [_dumps(e.details) for _, e in lines],
        [e.at for _, e in lines],
    ]


def _dumps(details: Mapping[str, Any]) -> str:
    return json.dumps(details if type(details) is dict else dict(details))


async def append_audits(conn: db.Connection, lines: Sequence[tuple[str, AuditEntry]]) -> None:
    """Add ``(run id, line)`` timeline lines of one or many runs, in the order given."""
    if lines:
        await conn.execute(SQL["append_audits"], *audit_arrays(lines))
