"""Starting a run: ``startRun``'s use case, and :func:`begin`, the start itself in a caller's
transaction (a worker starting a child run; docs/composition.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.delivery import recipients
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import Outcome
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import ids, persist
from taskflow.store.common import db
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Started:
    run: rows.RunRow
    created: bool


def _correlation(definition: Definition, subject: Mapping[str, Any]) -> str | None:
    if definition.correlate_by is None:
        return None
    value = ex.value_of(definition.correlate_by, ex.Env(subject=subject))
    return None if value is ex.MISSING or value is None else str(value)


@retry.retried("start a run")
async def start_run(
    services: Services,
    actor: Principal,
    *,
    workflow: str,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
    idempotency_key: str | None,
    version: int | None = None,
) -> Started:
    """Start a run for a subject (on ``version``, default the latest); the same idempotency
    key returns the live run again."""
    definition = services.catalog.get(workflow, version)
    access.require_start(actor, definition.name)
    if subject_type != definition.tracks:
        raise errors.ValidationError(
            f"Workflow {workflow!r} tracks subjects of type {definition.tracks!r}, not "
            f"{subject_type!r}.",
            field="subject.type",
        )
    if not external_id:
        raise errors.ValidationError(
            "subject.externalId must not be empty.", field="subject.externalId"
        )
    recipients.check_subject(definition, attributes, "subject.attributes")
    for attempt in range(2):
        try:
            return await _start(
                services, actor, definition, subject_type, external_id, attributes, idempotency_key
            )
        except asyncpg.UniqueViolationError:
            if attempt:
                raise
            # A concurrent start of the same subject won; the second pass finds its run.
    raise AssertionError("unreachable")


async def _start(
    services: Services,
    actor: Principal,
    definition: Definition,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
    idempotency_key: str | None,
) -> Started:
    now = services.clock.now()
    async with services.db.transaction() as conn:
        return await begin(
            services,
            conn,
            definition,
            actor.id,
            subject_type,
            external_id,
            attributes,
            idempotency_key,
            now,
        )


async def begin(
    services: Services,
    conn: db.Connection,
    definition: Definition,
    actor_id: str,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
    idempotency_key: str | None,
    now: datetime,
) -> Started:
    """Start a run in the caller's transaction (``start_run``'s work once checked; a worker
    starting a child run calls it under its parent's lock). ``RunExists`` when the subject
    has a live run of the workflow."""
    subject, _ = await subjects.upsert(conn, subject_type, external_id, attributes, now)
    if idempotency_key is not None:
        # A retried start gets its run back, even if the run has ended since.
        earlier = await rows.run_by_idempotency_key(
            conn, definition.name, subject.id, idempotency_key
        )
        if earlier is not None:
            return Started(earlier, created=False)
    existing = await rows.live_run_for(conn, definition.name, subject.id)
    if existing is not None:
        raise refusals.RunExists(
            f"{subject_type} {external_id!r} already has a live {definition.name!r} run "
            f"({existing.view.id}, in state {existing.view.state}); a second start needs the "
            "first start's idempotencyKey, or cancel the live run first.",
            run_id=existing.view.id,
        )
    run_id = ids.new_id()
    result = engine.start(
        definition,
        run_id=run_id,
        subject=subject.attributes,
        now=now,
        actor=actor_id,
        new_id=ids.new_id,
    )
    await rows.insert_run(
        conn,
        result.run,
        subject_id=subject.id,
        digest=definition.digest,
        correlation_key=_correlation(definition, subject.attributes),
        idempotency_key=idempotency_key,
        started_by=actor_id,
        now=now,
    )
    await persist.outcome(
        conn,
        _as_update(result),
        now=now,
        sla=deadlines.sla_of(services, definition, actor=actor_id),
    )
    run = await rows.get_run(conn, run_id)
    assert run is not None
    return Started(run, created=True)


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome, minus the run row the caller inserted itself."""
    return dataclasses.replace(result, run_changed=True)
