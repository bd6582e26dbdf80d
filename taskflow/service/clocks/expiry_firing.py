"""Firing a slot's expiry timers inside the worker's batch (``timers.py`` hands them here).

``expire``: the engine closes the slot with the outcome ``expired`` and settles the state
(``engine.expire``); the planner then cancels the slot's other timers and the batch's
flush writes it all. ``expire_warning``: the warning's notices ("expires in 2 days", a
magic link asked for each outsider when it says ``with_link``) and its line.
"""

from __future__ import annotations

from datetime import datetime

from taskflow.core.clocks import expiry, firing
from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import AuditEntry, Outcome, SlotView
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.service.delivery import notices as notice_rows
from taskflow.service.runs import ids
from taskflow.store.clocks import deadlines as store
from taskflow.store.common import db

#: The timeline kind of a warning (its notifications are of kind ``expiry``).
WARNED = expiry.WARNED


async def fire(
    services: Services,
    conn: db.Connection,
    state: runs_batch.RunState,
    definition: Definition,
    slot: SlotView,
    timer: store.TimerRow,
    now: datetime,
) -> int:
    """Carry out an expiry timer on ``slot`` (live, of the run's state); 1: it fired."""
    ctx = uow.context(
        definition, services.calendars, list(state.slots.values()),
        at_risk=services.settings.sla_at_risk,
    )  # fmt: skip
    if timer.kind == expiry.EXPIRE and slot.visit != state.run.visit:
        # Held by a pausing state: it expires when the run comes back (resuming the slot
        # re-plans its timers, and an instant already past is due at once).
        runs_batch.retire(state, timer, TimerStatus.CANCELLED)
        return 0
    if timer.kind == expiry.EXPIRE:
        result = engine.expire(
            definition,
            state.run,
            list(state.slots.values()),
            slot_id=slot.id,
            expires_at=timer.due_at,
            now=now,
            new_id=ids.new_id,
        )
        runs_batch.outcome(state, result, ctx, now)
        return 1
    warning, at, message = expiry.warning(
        definition, slot, timer.ref, state.run.subject, services.calendars, now
    )
    decl = definition.slot(slot.state, slot.name)
    effects = firing.effects(state.run, slot, decl, warning.actions, message=message, now=now)
    notes = await notice_rows.outbox_rows(
        services, conn, state.run, slot, effects.notices, WARNED, False, now
    )
    state.notes += notes
    details = {
        "key": timer.key,
        "slot": slot.name,
        "expires_at": at.isoformat() if at else None,
        "warning": warning.describe(),
    }
    lines = [AuditEntry(WARNED, now, None, slot.id, message, details)]
    if notes:
        recipients = [n.recipient for n in notes]
        lines.append(
            AuditEntry(
                "notification.sent",
                now,
                None,
                slot.id,
                None,
                {"recipients": recipients, "message": message},
            )
        )
    changed = effects.slot if effects.slot is not None else slot
    result = Outcome(state.run, (), (changed,), (*lines, *effects.audit), run_changed=False)
    runs_batch.outcome(state, result, ctx, now, rows=changed != slot)
    return 1
