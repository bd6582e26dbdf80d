"""Starting a run: ``startRun``'s use case, :func:`begin` (a start in the caller's
transaction: ``startRun``'s once checked, a worker starting a child run) and
:func:`open_run`, the insert every start shares (``startRun``, automatic starts of owned
subjects, child runs: docs/composition.md).

The caller of :func:`open_run` holds the subject (its upsert locked the row) and has checked
that no live run of the workflow exists; it inserts the run, decides its start and persists
it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition import actors
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.delivery import recipients
from taskflow.core.runs import engine, refusals, scheduling
from taskflow.core.runs.model import Outcome
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import ids, persist
from taskflow.service.workspaces import limits as workspace_limits
from taskflow.store.common import db
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects


@dataclass(frozen=True)
class Started:
    run: rows.RunRow
    created: bool


@dataclass(frozen=True)
class Starter:
    """Who starts a run: ``acting`` is what its start's hooks and routes read as
    ``ctx.actor``; ``started_by`` the principal recorded as the run's ``startedBy``."""

    acting: actors.Actor
    started_by: str

    @classmethod
    def of(cls, principal: Principal) -> Starter:
        """A principal starting a run itself."""
        return cls(actors.principal(principal), principal.id)


#: The longest correlation key a run keeps (``run.correlation_key``).
MAX_CORRELATION = 200


def correlation(definition: Definition, subject: Mapping[str, Any]) -> str | None:
    """The run's correlation key: the definition's ``correlate_by`` read from the subject.
    A value longer than :data:`MAX_CORRELATION` is refused (``ValidationError``): raised in
    the start's transaction, it leaves nothing written."""
    if definition.correlate_by is None:
        return None
    value = ex.value_of(definition.correlate_by, ex.Env(subject=subject))
    if value is ex.MISSING or value is None:
        return None
    key = str(value)
    if len(key) > MAX_CORRELATION:
        raise errors.ValidationError(
            f"{definition.name!r} correlates its runs by {definition.correlate_by}, which is "
            f"{len(key)} characters long on this subject; at most {MAX_CORRELATION} are "
            "accepted: shorten it.",
            field="subject.attributes",
        )
    return key


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
    delay: scheduling.Delay | None = None,
) -> Started:
    """Start a run for a subject (on ``version``, default the latest); the same idempotency
    key returns the live run again. ``delay`` (an instant or a duration) schedules it."""
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
    start_at = None
    if delay is not None:
        start_at = scheduling.start_instant(
            definition, services.calendars, services.clock.now(), at=delay.at, after=delay.after
        )
    for attempt in range(2):
        try:
            now = services.clock.now()
            async with services.db.transaction() as conn:
                return await begin(
                    services,
                    conn,
                    definition,
                    Starter.of(actor),
                    (subject_type, external_id, attributes),
                    idempotency_key,
                    now,
                    start_at=start_at,
                )
        except asyncpg.UniqueViolationError:
            if attempt:
                raise
            # A concurrent start of the same subject won; the second pass finds its run.
    raise AssertionError("unreachable")


async def begin(
    services: Services,
    conn: db.Connection,
    definition: Definition,
    starter: Starter,
    sent: tuple[str, str, Mapping[str, Any]],
    idempotency_key: str | None,
    now: datetime,
    *,
    start_at: datetime | None = None,
) -> Started:
    """Start a run in the caller's transaction (``start_run``'s work once checked; a worker
    starting a child run calls it under its parent's lock) on the subject ``sent`` (type,
    external id, attributes). ``RunExists`` when the subject has a live run of the
    workflow."""
    subject_type, external_id, attributes = sent
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
    run = await open_run(
        services,
        conn,
        starter,
        definition,
        subject,
        idempotency_key=idempotency_key,
        now=now,
        start_at=start_at,
    )
    return Started(run, created=True)


async def open_run(
    services: Services,
    conn: db.Connection,
    starter: Starter,
    definition: Definition,
    subject: subjects.SubjectRow,
    *,
    idempotency_key: str | None,
    now: datetime,
    start_at: datetime | None = None,
) -> rows.RunRow:
    """Insert a run of ``definition`` on ``subject``, started by ``starter`` at ``now``, and
    persist its start (slots, clocks, timers, timeline); answers the run as written. With
    ``start_at`` later than ``now`` the run is scheduled instead (``core/runs/scheduling.py``):
    the worker starts it then."""
    await workspace_limits.admit_run(conn, subject.id)
    run_id = ids.new_id()
    if start_at is not None and start_at > now:
        result = scheduling.scheduled(
            definition,
            run_id=run_id,
            subject=subject.attributes,
            start_at=start_at,
            now=now,
            actor=starter.acting,
        )
    else:
        result = engine.start(
            definition,
            run_id=run_id,
            subject=subject.attributes,
            now=now,
            actor=starter.acting,
            new_id=ids.new_id,
        )
    await rows.insert_run(
        conn,
        result.run,
        subject_id=subject.id,
        digest=definition.digest,
        correlation_key=correlation(definition, subject.attributes),
        idempotency_key=idempotency_key,
        started_by=starter.started_by,
        now=now,
    )
    await persist.outcome(
        conn,
        _as_update(result),
        now=now,
        sla=deadlines.sla_of(services, definition, actor=starter.started_by),
    )
    run = await rows.get_run(conn, run_id)
    assert run is not None
    return run


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome, minus the run row the caller inserted itself."""
    return dataclasses.replace(result, run_changed=True)
