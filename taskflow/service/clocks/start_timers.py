"""A delayed start's timer firing in the worker's batch: the scheduled run starts.

Taken like every due timer (its run locked ``SKIP LOCKED``, in the batch's one
transaction), so the run starts exactly once however many workers run, and a worker that
dies before its commit leaves the timer armed for the next (``core/runs/scheduling.py``).
"""

from __future__ import annotations

from datetime import datetime

from taskflow.core.clocks.timer_states import TimerRow
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs import scheduling
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.service.runs import ids


def fire(services: Services, state: runs_batch.RunState, timer: TimerRow, now: datetime) -> int:
    """Start the scheduled run of ``state`` (1), or retire the timer of a run cancelled
    meanwhile (0); the start is planned into the batch's writes."""
    run = state.run
    if not runs_batch.fire_if(state, timer, RunStatus.SCHEDULED):
        return 0
    definition = services.catalog.get(run.workflow, run.definition_version)
    result = scheduling.started(definition, run, now=now, new_id=ids.new_id)
    ctx = uow.context(definition, services.calendars, [], at_risk=services.settings.sla_at_risk)
    runs_batch.outcome(state, result, ctx, now)
    return 1
