"""Carrying out a reminder's or timeout's actions on one run (and its slot), in memory.

The per-slot step of the timer batch (``timers.fire_one``): the actions' effects decided
purely (``core/clocks/firing.effects``: notify, escalate, reassign, raise the priority,
move), the notifications put in the outbox, the slot's clocks synced, the lines and rows
planned against the run's :class:`timer_batch.RunState`; the caller flushes. A use case
that escalates one slot (``escalation.escalate``, an automation's ``escalate``) runs the
same step on a state it loaded for its one run, so both escalate alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from taskflow.core.clocks import deadlines, firing
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition import sla
from taskflow.core.definition.model import Slot
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.model import AuditEntry, Outcome, SlotView
from taskflow.service.clocks import away
from taskflow.service.clocks import deadlines as clock_service
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.service.delivery import notices as notice_rows
from taskflow.service.runs import ids
from taskflow.store.common import db


async def carry_out(
    services: Services,
    conn: db.Connection,
    state: runs_batch.RunState,
    definition: Definition,
    slot: SlotView | None,
    decl: Slot | None,
    actions: Sequence[sla.Action],
    *,
    kind: str,
    message: str,
    heads: Sequence[AuditEntry],
    quiet: bool,
    now: datetime,
    actor: str | None = None,
) -> None:
    """Apply ``actions`` to ``state`` (on ``slot``, or a state timeout's when None): ``heads``
    first on the timeline (the firing's own line), then what the actions did, named as
    ``actor``'s (None: the timer's). ``kind`` and ``quiet`` are the notifications'."""
    run = state.run
    gone = await away.away(conn, run, slot, decl, actions, now)
    result = firing.effects(run, slot, decl, actions, message=message, now=now, away=gone)
    written = await notice_rows.outbox_rows(
        services, conn, run, slot, result.notices, kind, quiet, now
    )
    state.notes += written  # one notification per recipient (``service/delivery/notices``)
    notified = [n.recipient for n in written]
    # The firing's lines go on the timeline with the change they caused: one write.
    lines = list(heads)
    if notified:
        lines.append(
            AuditEntry(
                "notification.sent",
                now,
                actor,
                slot.id if slot else None,
                None,
                {"recipients": notified, "message": message},
            )
        )
    lines += [dataclasses.replace(x, actor=actor) for x in result.audit] if actor else result.audit
    changed = result.slot if result.slot is not None else slot
    if changed is not None:
        assert slot is not None
        people = await clock_service.holders(services, conn, definition, changed)
        changed = deadlines.sync_clocks(definition, changed, run.subject, now, people)
        resync(services, state, definition, slot, changed, now, [] if result.move_to else lines)
    if result.move_to is not None:
        _move(services, state, definition, result.move_to, message, now, lines)
    elif changed is None:
        state.log(*lines)


def resync(
    services: Services,
    state: runs_batch.RunState,
    definition: Definition,
    before: SlotView,
    after: SlotView,
    now: datetime,
    audit: list[AuditEntry],
) -> None:
    """Write the slot (if it changed), the lines, and re-arm its timers (the firing counted)."""
    result = Outcome(state.run, (), (after,), tuple(audit), run_changed=False)
    ctx = uow.context(
        definition, services.calendars, [before], at_risk=services.settings.sla_at_risk
    )
    runs_batch.outcome(state, result, ctx, now, rows=after != before)


def _move(
    services: Services,
    state: runs_batch.RunState,
    definition: Definition,
    target: str,
    reason: str,
    now: datetime,
    lines: list[AuditEntry],
) -> None:
    slots = list(state.slots.values())
    result = engine.goto(
        definition,
        state.run,
        slots,
        target=target,
        reason=reason,
        now=now,
        actor=None,
        new_id=ids.new_id,
    )
    result = dataclasses.replace(result, audit=(*lines, *result.audit))
    ctx = uow.context(definition, services.calendars, slots, at_risk=services.settings.sla_at_risk)
    runs_batch.outcome(state, result, ctx, now)
