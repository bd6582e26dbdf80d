"""Carrying out a decision: the run, its slots and its timeline, in the caller's transaction."""

from __future__ import annotations

import uuid
from datetime import datetime

from taskflow.core.runs.model import AuditEntry, Outcome
from taskflow.service import buffered, deadlines
from taskflow.store import db, timeline
from taskflow.store import runs as rows


def new_id() -> str:
    """A fresh id for runs and slots (ids are chosen by the shell, never by the core)."""
    return str(uuid.uuid4())


async def outcome(
    conn: db.Connection,
    result: Outcome,
    *,
    workflow: str,
    now: datetime,
    sla: deadlines.Context | None = None,
) -> None:
    """Persist what the engine decided for an existing run.

    With ``sla``, the clocks, due instants and timers of the touched slots are
    carried out in the same transaction (see :mod:`taskflow.service.deadlines`),
    and events the run kept for a slot that just opened are delivered to it
    (see :mod:`taskflow.service.buffered`).
    """
    await write(conn, result, workflow=workflow, now=now, sla=sla)
    if sla is not None and buffered.needs_delivery(sla.definition, result):
        await buffered.deliver(conn, sla, result.run.id, now, write)


async def write(
    conn: db.Connection,
    result: Outcome,
    *,
    workflow: str,
    now: datetime,
    sla: deadlines.Context | None = None,
) -> None:
    """:func:`outcome` without delivering buffered events."""
    if result.run_changed:
        await rows.update_run(conn, result.run, now)
    if result.created:
        await rows.insert_slots(conn, result.created, workflow, now)
    if result.changed:
        await rows.update_slots(conn, result.changed, now)
    if sla is None:
        if result.audit:
            await timeline.append_audit(conn, result.run.id, result.audit)
        return
    # The timeline travels in the deadlines' one write statement.
    await deadlines.after_outcome(conn, result, sla, now, deadlines.timeline(result, sla, now))


async def audit(conn: db.Connection, run_id: str, *entries: AuditEntry) -> None:
    await timeline.append_audit(conn, run_id, entries)
