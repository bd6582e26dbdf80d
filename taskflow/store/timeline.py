"""Timeline rows: the lines a run's history keeps (``audit_event``), written in order."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from taskflow.core.runs.model import AuditEntry
from taskflow.store import db


async def append_audit(conn: db.Connection, run_id: str, entries: Iterable[AuditEntry]) -> None:
    """Add lines to a run's timeline, in order (one statement)."""
    await append_audits(conn, [(run_id, e) for e in entries])


async def append_audits(conn: db.Connection, lines: Sequence[tuple[str, AuditEntry]]) -> None:
    """Add ``(run id, line)`` timeline lines of one or many runs, in the order given."""
    if lines:
        args: list[Any] = []
        await conn.execute(audit_insert(lines, functools.partial(db.placeholder, args)), *args)


def audit_insert(lines: Sequence[tuple[str, AuditEntry]], arg: Callable[[Any], str]) -> str:
    """An INSERT of ``(run id, line)`` timeline lines over arrays, in order; ``arg`` places a
    parameter and names it."""
    return f"""
        INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
        SELECT run, slot, kind, actor, reason, details::jsonb, at
        FROM unnest({arg([uuid.UUID(r) for r, _ in lines])}::uuid[],
                    {arg([uuid.UUID(e.slot_id) if e.slot_id else None for _, e in lines])}::uuid[],
                    {arg([e.kind for _, e in lines])}::text[],
                    {arg([e.actor for _, e in lines])}::text[],
                    {arg([e.reason for _, e in lines])}::text[],
                    {arg([json.dumps(dict(e.details)) for _, e in lines])}::text[],
                    {arg([e.at for _, e in lines])}::timestamptz[])
             WITH ORDINALITY AS a(run, slot, kind, actor, reason, details, at, n)
        ORDER BY n"""
