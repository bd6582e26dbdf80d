"""Opening a new run on a subject, in the caller's transaction (startRun, automatic starts).

The caller holds the subject (its upsert locked the row) and has checked that no live
run of the workflow exists; this inserts the run, decides its start and persists it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from taskflow.core.access.principals import Principal
from taskflow.core.definition import actors
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine, scheduling
from taskflow.core.runs.model import Outcome
from taskflow.service.clocks import deadlines
from taskflow.service.common.container import Services
from taskflow.service.runs import ids, persist
from taskflow.store.common import db
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


def correlation(definition: Definition, subject: Mapping[str, Any]) -> str | None:
    """The run's correlation key: the definition's ``correlate_by`` read from the subject."""
    if definition.correlate_by is None:
        return None
    value = ex.value_of(definition.correlate_by, ex.Env(subject=subject))
    return None if value is ex.MISSING or value is None else str(value)


async def open_run(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    definition: Definition,
    subject: subjects.SubjectRow,
    *,
    idempotency_key: str | None,
    now: datetime,
    start_at: datetime | None = None,
) -> rows.RunRow:
    """Insert a run of ``definition`` on ``subject``, started by ``actor`` at ``now``, and
    persist its start (slots, clocks, timers, timeline); answers the run as written. With
    ``start_at`` later than ``now`` the run is scheduled instead (``core/runs/scheduling.py``):
    the worker starts it then."""
    run_id = ids.new_id()
    if start_at is not None and start_at > now:
        result = scheduling.scheduled(
            definition,
            run_id=run_id,
            subject=subject.attributes,
            start_at=start_at,
            now=now,
            actor=actors.principal(actor),
        )
    else:
        result = engine.start(
            definition,
            run_id=run_id,
            subject=subject.attributes,
            now=now,
            actor=actors.principal(actor),
            new_id=ids.new_id,
        )
    await rows.insert_run(
        conn,
        result.run,
        subject_id=subject.id,
        digest=definition.digest,
        correlation_key=correlation(definition, subject.attributes),
        idempotency_key=idempotency_key,
        started_by=actor.id,
        now=now,
    )
    await persist.outcome(
        conn,
        _as_update(result),
        now=now,
        sla=deadlines.sla_of(services, definition, actor=actor.id),
    )
    run = await rows.get_run(conn, run_id)
    assert run is not None
    return run


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome, minus the run row the caller inserted itself."""
    return dataclasses.replace(result, run_changed=True)
