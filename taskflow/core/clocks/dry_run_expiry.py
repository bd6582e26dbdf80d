"""A slot's expiry timers in a dry run, fired as ``service/clocks/expiry_firing.py`` fires
them live: ``expire`` closes the slot (``engine.expire``), a warning plans its notices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskflow.core.clocks import calendars, expiry, firing
from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.decision import NewId
from taskflow.core.runs.model import AuditEntry, Outcome, RunView, SlotView


def fired(
    definition: Definition,
    run: RunView,
    slots: list[SlotView],
    slot: SlotView,
    timer: TimerRow,
    registry: calendars.Registry,
    base: Mapping[str, Any],
    new_id: NewId,
) -> Outcome | list[AuditEntry]:
    """What ``timer`` does to ``slot`` at its due instant: the outcome of an expiry, or the
    lines of a warning (nothing when the slot waits in a pausing state: it expires on return)."""
    now = timer.due_at
    if timer.kind == expiry.EXPIRE:
        if slot.visit != run.visit:
            return []
        return engine.expire(
            definition, run, slots, slot_id=slot.id, expires_at=now, now=now, new_id=new_id
        )
    warning, at, message = expiry.warning(definition, slot, timer.ref, run.subject, registry, now)
    decl = definition.slot(slot.state, slot.name)
    told = firing.effects(run, slot, decl, warning.actions, message=message, now=now).notices
    details = {
        **base,
        "slot": slot.name,
        "expires_at": at.isoformat() if at else None,
        "warning": warning.describe(),
    }
    lines = [AuditEntry(expiry.WARNED, now, None, slot.id, message, details)]
    return lines + [
        AuditEntry("notification.planned", now, None, slot.id, message, {"to": n.who}) for n in told
    ]
