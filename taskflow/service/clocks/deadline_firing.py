"""The run's own timers firing in the worker's batch: a delayed start, and the run deadline's
at-risk and breach milestones (``core/clocks/run_deadline.py``).

Taken like every due timer (its run locked ``SKIP LOCKED``, in the batch's one transaction),
so each fires exactly once however many workers run. A deadline's firing writes its line
(``run.deadline_at_risk`` / ``run.deadline_breached``, the events of the same names) and
carries out the actions the definition declares, in order: notify, raise an event on the run
(into a slot waiting for it, as ``raiseEvent`` would), move the run to a state, cancel it.
A run that ended in the same instant, committed first, has cancelled the timer: nothing fires.
"""

from __future__ import annotations

from datetime import datetime

from taskflow.core.clocks import deadline_actions, deadlines, firing, run_deadline
from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs.model import AuditEntry
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.clocks import start_timers
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.service.delivery import notices as notice_rows
from taskflow.service.runs import ids
from taskflow.store.common import db

#: The kinds this module fires.
KINDS = (deadlines.START, *run_deadline.KINDS)


async def fire(
    services: Services,
    conn: db.Connection,
    state: runs_batch.RunState,
    timer: TimerRow,
    now: datetime,
) -> int:
    """Fire a run timer of :data:`KINDS` (1), or retire one whose run is no longer active (0)."""
    if timer.kind == deadlines.START:
        return start_timers.fire(services, state, timer, now)
    run = state.run
    if not runs_batch.fire_if(state, timer, RunStatus.ACTIVE):
        return 0
    definition = services.catalog.get(run.workflow, run.definition_version)
    rule = definition.deadline
    assert rule is not None  # the timer was planned from it
    found = run_deadline.due(definition, run, services.calendars, services.settings.sla_at_risk)
    base = {
        "key": timer.key,
        "late_seconds": round((now - timer.due_at).total_seconds(), 3),
    }
    line = run_deadline.firing_line(timer.kind, found, timer.due_at, now, base)
    actions = rule.on_risk if timer.kind == run_deadline.AT_RISK else rule.on_breach
    message = f"{definition.name}: {line.reason}"
    lines = [line]
    told = firing.effects(run, None, None, actions, message=message, now=now).notices
    notes = await notice_rows.outbox_rows(services, conn, run, None, told, line.kind, False, now)
    state.notes += notes
    if notes:
        sent = {"recipients": [n.recipient for n in notes], "message": message}
        lines.append(AuditEntry("notification.sent", now, None, None, None, sent))
    state.log(*lines)
    for action in actions:
        if state.run.status != RunStatus.ACTIVE:
            break  # an earlier action ended the run
        result = deadline_actions.outcome(
            definition,
            state.run,
            list(state.slots.values()),
            action.kind,
            action.target,
            reason=line.reason or "",
            now=now,
            new_id=ids.new_id,
        )
        if result is not None:
            ctx = uow.context(
                definition,
                services.calendars,
                list(state.slots.values()),
                at_risk=services.settings.sla_at_risk,
            )
            runs_batch.outcome(state, result, ctx, now)
    return 1
