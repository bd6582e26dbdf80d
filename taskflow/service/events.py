"""Events raised on runs: by run id, by subject, or by a correlation key the sender knows.

The event completes the one slot waiting for it (``slotName`` and ``item`` pick
one of several, e.g. a foreach); applications (role ``integration``) may raise
any event, staff only those of slots they are candidates for. An
``idempotencyKey`` makes a retry return the first result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskflow import errors
from taskflow.core.principals import Principal
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import LIVE, AuditEntry, Outcome, RunView, SlotView
from taskflow.service import access, deadlines, persist, retry
from taskflow.service.container import Services
from taskflow.service.runs import definition_for
from taskflow.store import db, locks, subjects
from taskflow.store import runs as rows


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
    subject = await subjects.find(conn, target.subject_type or "", target.subject_external_id or "")
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


@retry.retried("raise the event")
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
        # Runs are locked in id order (the lock order of docs/architecture.md).
        for run_id in sorted(await _target_runs(conn, target)):
            run = await rows.get_run(conn, run_id, lock=True)
            if run is None or run.view.status != "active":
                continue
            await locks.lock_live_slots(conn, [run_id])
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
        now = services.clock.now()  # once the runs are locked: one instant for the decision
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
