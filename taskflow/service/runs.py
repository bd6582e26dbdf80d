"""Run use cases: start, update the subject, raise an event, move, cancel.

Each is one transaction: lock the run row, load its slots, let the engine
decide with ``now``, persist the outcome. Refusals raise typed errors and
change nothing; those about a run the caller may see are written on its
timeline afterwards (in a transaction of their own).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg

from taskflow import errors
from taskflow.core.definition import expr as ex
from taskflow.core.definition.workflow import Definition
from taskflow.core.principals import Principal
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import LIVE, AuditEntry, Outcome, RunView, SlotView
from taskflow.service import access, deadlines, persist
from taskflow.service.container import Services
from taskflow.store import db
from taskflow.store import runs as rows

T = TypeVar("T")


def definition_for(services: Services, run: RunView) -> Definition:
    """The exact definition version a run started on."""
    return services.catalog.get(run.workflow, run.definition_version)


async def record_refusal(
    services: Services,
    run_id: str,
    actor: str,
    action: str,
    refusal: errors.TaskflowError,
    slot_id: str | None = None,
) -> None:
    """Put a refusal on the run's timeline (after the refused transaction rolled back)."""
    entry = AuditEntry(
        "refused",
        services.clock.now(),
        actor,
        slot_id,
        refusal.message,
        {"action": action, "code": refusal.code},
    )
    async with services.db.transaction() as conn:
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


@dataclass(frozen=True)
class Started:
    run: rows.RunRow
    created: bool


def _correlation(definition: Definition, subject: Mapping[str, Any]) -> str | None:
    if definition.correlate_by is None:
        return None
    value = ex.value_of(definition.correlate_by, ex.Env(subject=subject))
    return None if value is ex.MISSING or value is None else str(value)


async def start_run(
    services: Services,
    actor: Principal,
    *,
    workflow: str,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
    idempotency_key: str | None,
) -> Started:
    """Start a run for a subject; the same idempotency key returns the live run again."""
    access.require_integration(actor, "start runs")
    definition = services.catalog.get(workflow)
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
        subject, _ = await rows.upsert_subject(conn, subject_type, external_id, attributes, now)
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
        run_id = persist.new_id()
        result = engine.start(
            definition,
            run_id=run_id,
            subject=subject.attributes,
            now=now,
            actor=actor.id,
            new_id=persist.new_id,
        )
        await rows.insert_run(
            conn,
            result.run,
            subject_id=subject.id,
            digest=definition.digest,
            correlation_key=_correlation(definition, subject.attributes),
            idempotency_key=idempotency_key,
            started_by=actor.id,
            now=now,
        )
        await persist.outcome(
            conn,
            _as_update(result),
            workflow=definition.name,
            now=now,
            sla=deadlines.context(definition, services.calendars, actor=actor.id),
        )
        run = await rows.get_run(conn, run_id)
    assert run is not None
    return Started(run, created=True)


def _as_update(result: Outcome) -> Outcome:
    """A fresh run's outcome, minus the run row the caller inserted itself."""
    return Outcome(result.run, result.created, result.changed, result.audit, run_changed=True)


async def decide(
    services: Services,
    conn: db.Connection,
    run_id: str,
    decision: Callable[[Definition, rows.RunRow, list[SlotView]], Outcome],
) -> Outcome:
    """Lock the run, load its slots, decide, persist: the shape of every run use case."""
    run = await rows.get_run(conn, run_id, lock=True)
    if run is None:
        raise errors.NotFound(f"No run has the id {run_id!r}.")
    slots = await deadlines.load_slots(conn, run_id)
    definition = definition_for(services, run.view)
    result = decision(definition, run, slots)
    await persist.outcome(
        conn,
        result,
        workflow=definition.name,
        now=services.clock.now(),
        sla=deadlines.context(definition, services.calendars, slots),
    )
    return result


async def readable_run(
    services: Services, conn: db.Connection, actor: Principal, run_id: str
) -> tuple[rows.RunRow, list[SlotView]]:
    """A run and its slots, if the actor may read it; NOT_FOUND otherwise (the two look alike)."""
    run = await rows.get_run(conn, run_id)
    slots = await rows.slots_of_run(conn, run_id) if run else []
    if run is None or not (
        access.can_read_run(actor, slots)
        or access.may_move(actor, definition_for(services, run.view), run.view)
    ):
        raise errors.NotFound(f"No run has the id {run_id!r}.")
    return run, slots


async def update_subject(
    services: Services,
    actor: Principal,
    *,
    subject_type: str,
    external_id: str,
    attributes: Mapping[str, Any],
) -> tuple[rows.SubjectRow, list[str]]:
    """Replace a subject's attributes; every live run re-checks its rules. Returns the run ids."""
    access.require_integration(actor, "update subjects")
    now = services.clock.now()
    async with services.db.transaction() as conn:
        subject = await rows.find_subject(conn, subject_type, external_id)
        if subject is None:
            raise errors.NotFound(
                f"No {subject_type} {external_id!r} is tracked; start a run for it first."
            )
        run_ids = await rows.live_runs_of_subject(conn, subject.id)
        subject = await rows.update_subject(conn, subject.id, attributes, now)
        for run_id in run_ids:
            await decide(
                services,
                conn,
                run_id,
                lambda definition, run, slots: engine.change_subject(
                    definition,
                    run.view,
                    slots,
                    subject=attributes,
                    now=now,
                    actor=actor.id,
                    new_id=persist.new_id,
                ),
            )
    return subject, run_ids


@dataclass(frozen=True)
class EventTarget:
    """Where an event goes: one of a run id, a subject, or a correlation key."""

    run_id: str | None = None
    subject_type: str | None = None
    subject_external_id: str | None = None
    correlation_key: str | None = None
    #: Narrow to one slot when several wait for the event (e.g. one per foreach element).
    slot_name: str | None = None
    item: Any = None


async def _target_runs(conn: db.Connection, target: EventTarget) -> list[str]:
    given = [
        target.run_id is not None,
        target.subject_type is not None,
        target.correlation_key is not None,
    ]
    if sum(given) != 1:
        raise errors.ValidationError(
            "Give exactly one target: runId, subject {type, externalId}, or correlationKey.",
            field="target",
        )
    if target.run_id is not None:
        return [target.run_id]
    if target.correlation_key is not None:
        return await rows.runs_by_correlation(conn, target.correlation_key)
    subject = await rows.find_subject(
        conn, target.subject_type or "", target.subject_external_id or ""
    )
    return await rows.live_runs_of_subject(conn, subject.id) if subject else []


def _waiting(
    slots: list[SlotView], run: RunView, event: str, target: EventTarget
) -> list[SlotView]:
    return [
        s
        for s in slots
        if s.visit == run.visit
        and s.status in LIVE
        and s.status != "pending"
        and s.waits_for == event
        and (target.slot_name is None or s.name == target.slot_name)
        and (target.item is None or s.item == target.item)
    ]


async def raise_event(
    services: Services,
    actor: Principal,
    *,
    event: str,
    payload: Mapping[str, Any] | None,
    target: EventTarget,
    idempotency_key: str | None,
) -> tuple[rows.RunRow, SlotView, bool]:
    """Deposit an event in the one slot waiting for it; (run, slot, whether it was new)."""
    now = services.clock.now()
    async with services.db.transaction() as conn:
        if idempotency_key is not None:
            seen = await conn.fetchrow(
                "SELECT run, slot FROM audit_event WHERE kind = 'slot.satisfied' "
                "AND details->>'idempotency_key' = $1",
                idempotency_key,
            )
            if seen is not None:
                run = await rows.get_run(conn, str(seen["run"]))
                slot = await rows.get_slot(conn, str(seen["slot"]))
                assert run is not None
                assert slot is not None
                return run, slot, False
        mine = access.keys(actor)
        candidates: list[tuple[rows.RunRow, SlotView]] = []
        for run_id in await _target_runs(conn, target):
            run = await rows.get_run(conn, run_id, lock=True)
            if run is None or run.view.status != "active":
                continue
            slots = await rows.slots_of_run(conn, run_id)
            if not actor.is_integration and not access.can_read_run(actor, slots):
                continue
            candidates += [(run, s) for s in _waiting(slots, run.view, event, target)]
        if not candidates:
            raise refusals.NoSlotWaiting(
                f"No slot the target can see waits for the event {event!r} now; check the target "
                "and the event name, or the run has moved on.",
                event=event,
            )
        if len(candidates) > 1:
            names = sorted(
                {
                    f"{s.name}[{s.item_index}]" if s.item_index is not None else s.name
                    for _, s in candidates
                }
            )
            raise refusals.AmbiguousEvent(
                f"{len(candidates)} slots wait for {event!r} ({', '.join(names)}); narrow the "
                "target with slotName and item.",
                slots=names,
            )
        run, slot = candidates[0]
        if not actor.is_integration and not slot.audience.admits(mine):
            raise refusals.NotCandidate(
                f"You may not raise {event!r} here: the slot is for {slot.audience}.",
                audience=str(slot.audience),
            )
        definition = definition_for(services, run.view)
        slots = await deadlines.load_slots(conn, run.view.id)
        result = engine.deposit(
            definition,
            run.view,
            slots,
            slot_id=slot.id,
            event=event,
            payload=payload,
            actor=actor.id,
            actor_keys=mine,
            expected_version=None,
            now=now,
            new_id=persist.new_id,
            on_behalf=True,
        )
        audit = tuple(
            AuditEntry(
                e.kind,
                e.at,
                e.actor,
                e.slot_id,
                e.reason,
                {**e.details, "idempotency_key": idempotency_key},
            )
            if e.kind == "slot.satisfied" and idempotency_key
            else e
            for e in result.audit
        )
        result = Outcome(result.run, result.created, result.changed, audit, result.run_changed)
        await persist.outcome(
            conn,
            result,
            workflow=definition.name,
            now=now,
            sla=deadlines.context(definition, services.calendars, slots, actor.id),
        )
        fresh_run = await rows.get_run(conn, run.view.id)
        fresh_slot = await rows.get_slot(conn, slot.id)
    assert fresh_run is not None
    assert fresh_slot is not None
    return fresh_run, fresh_slot, True


async def move(
    services: Services, actor: Principal, *, run_id: str, name: str, data: Mapping[str, Any] | None
) -> rows.RunRow:
    """Make a manual move on a run the actor may read."""
    now = services.clock.now()
    async with services.db.connection() as conn:
        await readable_run(services, conn, actor, run_id)

    async def work() -> rows.RunRow:
        async with services.db.transaction() as conn:
            await decide(
                services,
                conn,
                run_id,
                lambda definition, run, slots: engine.move(
                    definition,
                    run.view,
                    slots,
                    name=name,
                    data=data,
                    principal=actor,
                    now=now,
                    new_id=persist.new_id,
                ),
            )
            run = await rows.get_run(conn, run_id)
        assert run is not None
        return run

    return await refusals_recorded(services, run_id, actor.id, f"move {name}", work)


async def cancel_run(
    services: Services, actor: Principal, *, run_id: str, reason: str
) -> rows.RunRow:
    """Cancel a live run (leads, admins and applications)."""
    if not reason.strip():
        raise errors.ValidationError("Say why the run is cancelled (reason).", field="reason")
    now = services.clock.now()
    async with services.db.connection() as conn:
        await readable_run(services, conn, actor, run_id)
    access.require_lead(actor, "cancel runs")
    async with services.db.transaction() as conn:
        await decide(
            services,
            conn,
            run_id,
            lambda definition, run, slots: engine.cancel(
                definition, run.view, slots, reason=reason, now=now, actor=actor.id
            ),
        )
        run = await rows.get_run(conn, run_id)
    assert run is not None
    return run


async def runs_by_ids(services: Services, run_ids: list[str]) -> dict[str, rows.RunRow]:
    """Runs by id (for batch loaders; the caller has already checked visibility)."""
    async with services.db.connection() as conn:
        return await rows.get_runs(conn, run_ids)
