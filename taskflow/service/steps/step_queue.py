"""Enqueueing automatic steps when their timers fire (inside the worker's timer batch).

A state's own action needs no timer: the unit of work that enters the state writes
its step row (``core/steps/step_timers.due_steps``). An ``every`` timer, a timeout that
runs an action, and a ``step`` timer armed by an older version each add a step row
(``store/steps/steps.py``) to the batch's run state; the batch's
flush writes them all with one statement, in its transaction, under the runs'
locks. Workers then run them outside any transaction (``service/steps/steps.py``). A
replayed firing adds nothing: the row's key is unique.
"""

from __future__ import annotations

from datetime import datetime

from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition import steps as st
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import Outcome
from taskflow.core.steps import step_timers
from taskflow.service.clocks import timer_batch as runs_batch
from taskflow.service.common.container import Services
from taskflow.store.clocks import deadlines as timer_rows
from taskflow.store.steps import steps as store

#: The kinds of step rows: an automatic state's action, an action beside slots on entry,
#: recurring work, a timeout's action.
ACTION, ENTRY, EVERY, TIMEOUT = (
    step_timers.ACTION,
    step_timers.ENTRY,
    step_timers.EVERY_STEP,
    step_timers.TIMEOUT,
)
#: The timer kinds that enqueue a step when they fire.
KINDS = (step_timers.STEP, step_timers.EVERY)


def fired(
    services: Services,
    batch: runs_batch.RunState,
    definition: Definition,
    timer: timer_rows.TimerRow,
    count: int,
    now: datetime,
) -> None:
    """A ``step`` or ``every`` timer fired (``count``-th time): enqueue its step, due now;
    an ``every`` timer is armed again for its next firing, if any."""
    run = batch.run
    state = definition.state(run.state)
    if timer.kind == step_timers.STEP:
        path, key, kind = state.action_path, timer.key, ACTION if state.automatic else ENTRY
    else:
        path, key, kind = state.every[int(timer.ref)].path, f"{timer.key}:{count}", EVERY
    assert path is not None
    # Written with the batch's flush, one statement for every step the batch made due.
    batch.steps.append(store.NewStep(key, run.id, run.visit, run.state, kind, path, now))
    if timer.kind == step_timers.EVERY:  # the run's timers planned again: its next firing
        ctx = uow.context(definition, services.calendars, at_risk=services.settings.sla_at_risk)
        again = Outcome(run, (), (), (), run_changed=True)
        runs_batch.outcome(batch, again, ctx, now, rows=False)


def path(action: st.ActionLike | None) -> str | None:
    """The import path of an action (a path as written, or a function's module:qualname)."""
    return st.action_path(action)


def timeout_actions(
    batch: runs_batch.RunState, timer: timer_rows.TimerRow, paths: list[str], now: datetime
) -> None:
    """A timeout that runs actions fired: one step per action, due now (written with the
    batch's flush)."""
    run = batch.run
    for index, path in enumerate(paths):
        key = f"{timer.key}:run:{index}"
        batch.steps.append(store.NewStep(key, run.id, run.visit, run.state, TIMEOUT, path, now))
