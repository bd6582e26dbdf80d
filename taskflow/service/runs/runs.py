"""Run use cases: start, update the subject, raise an event, move, cancel.

Each is one transaction: lock the run row, load its slots, let the engine
decide with ``now``, persist the outcome. Refusals raise typed errors and
change nothing; those about a run the caller may see are written on its
timeline afterwards (in a transaction of their own).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.definition import actors, owning
from taskflow.core.definition.model import State
from taskflow.core.definition.workflow import Definition
from taskflow.core.delivery import recipients
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView
from taskflow.service.access import access
from taskflow.service.clocks import deadlines
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import decisions, ids, persist
from taskflow.service.runs.starting import Started as Started
from taskflow.service.runs.starting import start_run as start_run
from taskflow.store.common import db, locks
from taskflow.store.runs import runs as rows
from taskflow.store.runs import subjects

T = TypeVar("T")


def definition_for(services: Services, run: RunView) -> Definition:
    """The exact definition version a run is on, loaded: to act on the run (a version that
    left the code is refused, naming ``taskflow runs migrate``)."""
    return services.catalog.get(run.workflow, run.definition_version)


def state_for_reading(services: Services, run: RunView) -> State | None:
    """The run's current state as a read shows it: from the loaded version, else from the
    recorded document of a version that left the code (labels, fields, checklist; no moves);
    None when neither knows it."""
    definition = services.catalog.for_reading(run.workflow, run.definition_version)
    if definition is None or not definition.has_state(run.state):
        return None
    return definition.state(run.state)


async def record_refusal(
    services: Services,
    run_id: str,
    actor: str,
    action: str,
    refusal: errors.TaskflowError,
    slot_id: str | None = None,
) -> None:
    """Put a refusal on the run's timeline (after the refused transaction rolled back)."""
    async with services.db.transaction() as conn:
        # The run's lock first, like every writer of its timeline: the line's place in the
        # timeline's order and its instant then agree.
        await locks.lock_run(conn, run_id)
        entry = AuditEntry(
            "refused",
            services.clock.now(),
            actor,
            slot_id,
            refusal.message,
            {"action": action, "code": refusal.code},
        )
        await persist.audit(conn, run_id, entry)


async def refusals_recorded(
    services: Services,
    run_id: str | None,
    actor: str,
    action: str,
    work: Callable[[], Awaitable[T]],
    slot_id: str | None = None,
) -> T:
    """Run ``work``; a refusal is written on the run's timeline, then raised again."""
    try:
        return await work()
    except (refusals.Refusal, errors.ValidationError) as refusal:
        if run_id is not None:
            await record_refusal(services, run_id, actor, action, refusal, slot_id)
        raise


async def decide(
    services: Services,
    conn: db.Connection,
    run_id: str,
    decision: decisions.Decision,
    *,
    now: datetime | None = None,
) -> Outcome:
    """Lock the run, load its slots, decide, persist: the shape of every run use case.

    The decision and everything written for it take ONE instant: ``now`` if the caller
    holds the lock already, else the clock read once the run's lock is held (so a later
    line of the timeline never carries an earlier instant).
    """
    run = await rows.get_run(conn, run_id, lock=True)
    if run is None:
        raise errors.NotFound(f"No run has the id {run_id!r}.")
    await locks.lock_live_slots(conn, [run_id])  # the lock order: the run, then its slots
    if now is None:
        now = services.clock.now()
    slots = await deadlines.load_slots(conn, run_id)
    definition = definition_for(services, run.view)
    result = decision(definition, run, slots, now)
    await persist.outcome(conn, result, now=now, sla=deadlines.sla_of(services, definition, slots))
    return result


async def readable_run(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    run_id: str,
    checked: access.RequestAccess | None = None,
) -> tuple[rows.RunRow, list[SlotView]]:
    """A run and its slots, if the actor may read it; NOT_FOUND otherwise (the two look alike)."""
    return await (checked or access.RequestAccess(services, actor)).readable_run(run_id, conn)


@retry.retried("update the subject")
async def update_subject(
    services: Services,
    actor: Principal,
    *,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
) -> tuple[subjects.SubjectRow, list[str]]:
    """Replace a subject's attributes; every live run re-checks its rules. Returns the run ids."""
    require_subject_grant(services, actor, subject_type)
    check_subject(services, subject_type, attributes)
    async with services.db.transaction() as conn:
        subject = await subjects.find(conn, subject_type, external_id, lock=True)
        if subject is None:
            raise errors.NotFound(
                f"No {subject_type} {external_id!r} is tracked; start a run for it first."
            )
        if subject.gone_at is not None:
            raise refusals.SubjectGone(f"The {subject_type} {external_id!r} was deleted.")
        # Every live run locked (in id order) before anything is written; one instant for all.
        run_ids = await rows.live_runs_of_subject(conn, subject.id)
        now = services.clock.now()
        updated = await subjects.update(conn, subject.id, attributes, now)
        await resubject(services, conn, actor, run_ids, attributes, now, subject.attributes)
    return updated, run_ids


def require_subject_grant(services: Services, actor: Principal, subject_type: str) -> None:
    """An application granted some workflow tracking ``subject_type`` (and admins)."""
    access.require_integration(actor, "update subjects")
    if not any(
        d.tracks == subject_type and access.may_start(actor, d.name)
        for d in services.catalog.latest()
    ):
        raise errors.Forbidden(
            f"None of your integration grants covers a workflow tracking {subject_type!r}; "
            "ask an admin for a grant on it (see docs/access.md)."
        )


def check_subject(services: Services, subject_type: str, attributes: Mapping[str, Any]) -> None:
    """Refuse attributes that write the owned field, or that the workflows tracking the type
    cannot use (an address their recipients refuse)."""
    owning.check_writes(services.catalog.owners.get(subject_type), attributes)
    for tracking in services.catalog.latest():
        if tracking.tracks == subject_type:
            recipients.check_subject(tracking, attributes, "attributes")


async def resubject(
    services: Services,
    conn: db.Connection,
    actor: Principal,
    run_ids: list[str],
    attributes: Mapping[str, Any],
    now: datetime,
    before: Mapping[str, Any],
) -> None:
    """The live runs (locked in id order) re-check their rules on ``attributes`` (``before``)."""
    for run_id in run_ids:
        await decide(
            services,
            conn,
            run_id,
            lambda definition, run, slots, now: engine.change_subject(
                # A live run of an older version may read an address elsewhere.
                _checked(_granted(actor, definition, run), attributes),
                replace(run.view, subject=before),
                slots,
                subject=attributes,
                now=now,
                actor=actors.principal(actor),
                new_id=ids.new_id,
                registry=services.calendars,
            ),
            now=now,
        )


def _checked(definition: Definition, attributes: Mapping[str, Any]) -> Definition:
    recipients.check_subject(definition, attributes, "attributes")
    return definition


def guarded(expected_version: int | None, decision: decisions.Decision) -> decisions.Decision:
    """``decision``, refused first when the locked run's version is not ``expected_version``."""

    def checked(
        definition: Definition, run: rows.RunRow, slots: list[SlotView], now: datetime
    ) -> Outcome:
        refusals.check_run_version(expected_version, run.version, run.view.state)
        return decision(definition, run, slots, now)

    return checked


async def decided(
    services: Services,
    run_id: str,
    expected_version: int | None,
    decision: decisions.Decision,
) -> rows.RunRow:
    """In one transaction: ``decision`` (refused when the run is not at ``expected_version``)
    carried out by :func:`decide`; answers the run as it stands after it."""
    async with services.db.transaction() as conn:
        await decide(services, conn, run_id, guarded(expected_version, decision))
        run = await rows.get_run(conn, run_id)
    assert run is not None
    return run


def _granted(actor: Principal, definition: Definition, run: rows.RunRow) -> Definition:
    """Refuse (rolling the whole update back) a subject feeding a workflow not granted, or
    a live run another application started (integrations act on their own runs)."""
    access.require_application_on_run(actor, definition.name, run.started_by, "update subjects")
    return definition


@retry.retried("move the run")
async def move(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    name: str,
    data: Mapping[str, Any] | None,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Make a manual move on a run the actor may read (refused if it is not at
    ``expected_version`` any more)."""
    async with services.db.connection() as conn:
        await readable_run(services, conn, actor, run_id)

    def work() -> Awaitable[rows.RunRow]:
        return decided(
            services,
            run_id,
            expected_version,
            decisions.made(engine.move, name=name, data=data, principal=actor),
        )

    return await refusals_recorded(services, run_id, actor.id, f"move {name}", work)


@retry.retried("cancel the run")
async def cancel_run(
    services: Services,
    actor: Principal,
    *,
    run_id: str,
    reason: str,
    expected_version: int | None = None,
) -> rows.RunRow:
    """Cancel a live run (leads, admins and applications); refused if it is not at
    ``expected_version`` any more."""
    if not reason.strip():
        raise errors.ValidationError("Say why the run is cancelled (reason).", field="reason")
    async with services.db.connection() as conn:
        found, slots = await readable_run(services, conn, actor, run_id)
    access.require_cancel(actor, found.view.workflow, slots, found.started_by)
    return await decided(
        services,
        run_id,
        expected_version,
        decisions.made(engine.cancel, reason=reason, actor=actors.principal(actor)),
    )


async def runs_by_ids(services: Services, run_ids: list[str]) -> dict[str, rows.RunRow]:
    """Runs by id (for batch loaders; the caller has already checked visibility)."""
    async with services.db.connection() as conn:
        return await rows.get_runs(conn, run_ids)
