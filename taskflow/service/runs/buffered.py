"""Buffered events: kept when no slot waits, delivered in arrival order when one opens.

A workflow opts in per event (``Event("x", buffer=Buffer(max=10, for_=real.days(7)))``).
:func:`keep` stores an early event (``event.buffered`` on the timeline);
:func:`deliver` runs after any decision that opened a slot waiting for a
buffered event, or ended the run: in the same transaction, with the run row
already locked, it hands each kept event to the one slot waiting for it
(``event.delivered`` then the usual ``slot.satisfied``), drops those past their
time (``event.expired``) and those the slot refuses (``event.dropped``). A run
that ends drops what it kept. Nothing sleeps: the worker's every round drops
kept events past their time (:func:`expire_due`), and so does any read of a
run's buffer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.definition import fields
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import refusals
from taskflow.core.runs.model import LIVE, OPEN, AuditEntry, Outcome, RunView, SlotView
from taskflow.core.runs.statuses import RunStatus, SlotStatus
from taskflow.service.clocks import deadlines
from taskflow.service.common.container import Services
from taskflow.service.runs import decisions
from taskflow.store.common import db
from taskflow.store.runs import event_buffer as store
from taskflow.store.runs import runs as rows
from taskflow.store.runs import timeline

#: ``persist.write``: carry out an outcome without delivering (delivery calls it itself).
Write = Callable[..., Awaitable[None]]


def buffered_events(definition: Definition) -> frozenset[str]:
    """The events of ``definition`` that are kept when they arrive early."""
    return frozenset(e.name for e in definition.events if e.buffer is not None)


def needs_delivery(definition: Definition, result: Outcome) -> bool:
    """True when ``result`` opened a slot waiting for a buffered event, or ended the run."""
    names = buffered_events(definition)
    if not names:
        return False
    if result.run.status != RunStatus.ACTIVE:
        return result.run_changed
    touched = (*result.created, *result.changed)
    return any(s.status == OPEN and s.waits_for in names for s in touched)


def waiting(
    slots: Iterable[SlotView], run: RunView, event: str, slot_name: str | None, item: Any
) -> list[SlotView]:
    """The slots of the run's current visit that wait for ``event`` now (narrowed)."""
    return [
        s
        for s in slots
        if s.visit == run.visit
        and s.status in LIVE
        and s.status != SlotStatus.PENDING
        and s.waits_for == event
        and (slot_name is None or s.name == slot_name)
        and (item is None or s.item == item)
    ]


def _check_payload(definition: Definition, event: str, payload: Mapping[str, Any]) -> None:
    """Refuse now a payload that no slot waiting for ``event`` could take later."""
    declared = [sl for _, sl in definition.slots() if sl.waits_for == event]
    problem: fields.PayloadError | None = None
    for slot in declared:
        try:
            fields.validate_payload(slot.fields, payload)
            return
        except fields.PayloadError as exc:
            problem = exc
    if problem is not None:
        raise problem


async def keep(
    conn: db.Connection,
    definition: Definition,
    run: RunView,
    *,
    event: str,
    payload: Mapping[str, Any] | None,
    slot_name: str | None,
    item: Any,
    actor: str,
    now: datetime,
) -> store.Buffered:
    """Keep an early event for ``run`` (locked by the caller); refused when its buffer is full."""
    declared = definition.event(event)
    assert declared is not None
    assert declared.buffer is not None
    body = dict(payload or {})
    _check_payload(definition, event, body)
    kept = await _drop_expired(conn, run.id, now)
    same = [b for b in kept if b.event == event]
    if len(same) >= declared.buffer.max:
        raise refusals.NoSlotWaiting(
            f"No slot waits for {event!r} now and the run already keeps {len(same)} early "
            f"{event!r} events (the most it keeps); raise it again once a slot waits for it.",
            event=event,
        )
    buffered = await store.insert(
        conn,
        run_id=run.id,
        event=event,
        payload=body,
        slot_name=slot_name,
        item=item,
        actor=actor,
        arrived_at=now,
        expires_at=now + declared.buffer.keep_for(),
    )
    await _audit(
        conn,
        run.id,
        AuditEntry(
            "event.buffered",
            now,
            actor,
            None,
            f"{event} kept until a slot waits for it",
            {
                **_facts(buffered),
                "payload": body,
                "position": len(same) + 1,
            },
        ),
    )
    return buffered


def _facts(b: store.Buffered) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "event": b.event,
        "buffered": b.id,
        "arrived_at": b.arrived_at.isoformat(),
        "expires_at": b.expires_at.isoformat(),
    }
    if b.slot_name is not None:
        facts["slot_name"] = b.slot_name
    if b.item is not None:
        facts["item"] = b.item
    return facts


async def _audit(conn: db.Connection, run_id: str, *entries: AuditEntry) -> None:
    await timeline.append_audit(conn, run_id, entries)


async def _drop_expired(conn: db.Connection, run_id: str, now: datetime) -> list[store.Buffered]:
    """The run's kept events still in time; the others are dropped with ``event.expired``."""
    kept = []
    for b in await store.of_run(conn, run_id):
        if b.expires_at > now:
            kept.append(b)
            continue
        await _drop(conn, b, now, "event.expired", f"{b.event} expired before a slot waited")
    return kept


async def _drop(conn: db.Connection, b: store.Buffered, now: datetime, kind: str, why: str) -> None:
    await store.delete(conn, b.id)
    await _audit(conn, b.run_id, AuditEntry(kind, now, "taskflow", None, why, _facts(b)))


async def deliver(
    conn: db.Connection,
    ctx: deadlines.Context,
    run_id: str,
    now: datetime,
    write: Write,
) -> int:
    """Hand the run's kept events to the slots now waiting for them; how many were delivered.

    The caller holds the run's row lock. One event at a time, oldest first: each
    delivery is a decision of its own, and may open further slots that later
    events are delivered to.
    """
    definition = ctx.definition
    delivered = 0
    while True:
        run = await rows.get_run(conn, run_id)
        if run is None:
            return delivered
        kept = await _drop_expired(conn, run_id, now)
        if not kept:
            return delivered
        if run.view.status != RunStatus.ACTIVE:
            for b in kept:
                await _drop(conn, b, now, "event.expired", f"{b.event} dropped: the run ended")
            return delivered
        slots = await deadlines.load_slots(conn, run_id)
        for b in kept:
            # Open slots only: a kept event never completes a slot someone holds.
            found = [
                s
                for s in waiting(slots, run.view, b.event, b.slot_name, b.item)
                if s.status == OPEN
            ]
            if len(found) == 1:
                break
        else:
            return delivered
        slot = found[0]
        await store.delete(conn, b.id)
        try:
            # On behalf of who raised it: they were checked when it arrived.
            deposit = decisions.depositing(
                slot.id, b.event, b.payload, actor=b.actor, actor_keys=frozenset(), on_behalf=True
            )
            result = deposit(definition, run, slots, now)
        except errors.TaskflowError as exc:
            why = f"{b.event} could not be delivered to {slot.name}: {exc.message}"
            await _audit(
                conn, run_id, AuditEntry("event.dropped", now, "taskflow", slot.id, why, _facts(b))
            )
            continue
        line = AuditEntry(
            "event.delivered",
            now,
            b.actor,
            slot.id,
            f"{b.event} delivered to {slot.name} (kept since {b.arrived_at.isoformat()})",
            _facts(b),
        )
        result = dataclasses.replace(result, audit=(line, *result.audit))
        await write(
            conn,
            result,
            now=now,
            sla=deadlines.context(definition, ctx.registry, slots, b.actor, ctx.at_risk),
        )
        delivered += 1


async def expire_due(services: Services, now: datetime, *, limit: int = 100) -> int:
    """Drop kept events past their time (``event.expired``); the worker calls it each round.

    Runs locked by someone else are skipped (``SKIP LOCKED``): whoever holds them reads
    their buffer, or the next round does. Returns how many events were dropped.
    """
    async with services.db.connection() as conn:
        run_ids = await store.runs_with_expired(conn, now, limit)
    if not run_ids:
        return 0
    dropped = 0
    async with services.db.transaction() as conn:
        for run_id in await store.lock_runs(conn, run_ids):
            for b in await store.of_run(conn, run_id):
                if b.expires_at <= now:
                    why = f"{b.event} expired before a slot waited"
                    await _drop(conn, b, now, "event.expired", why)
                    dropped += 1
    return dropped


async def after_batch(
    conn: db.Connection,
    services: Services,
    runs: Iterable[RunView],
    now: datetime,
    write: Write,
) -> int:
    """The worker's batch moved these (locked) runs: deliver what they kept to new slots."""
    delivered = 0
    for run in runs:
        definition = services.catalog.get(run.workflow, run.definition_version)
        if buffered_events(definition):
            ctx = deadlines.context(
                definition, services.calendars, at_risk=services.settings.sla_at_risk
            )
            delivered += await deliver(conn, ctx, run.id, now, write)
    return delivered
