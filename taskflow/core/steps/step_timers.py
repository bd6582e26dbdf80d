"""The timers of automatic steps: when a state's action, and each ``every``, falls due.

Pure. A state with an action makes its step row due when the run enters the state:
the unit of work that enters it writes the row (:func:`due_steps`, no timer hop);
an ``every`` arms an ``every`` timer for its next firing (the n-th at ``n *
interval`` after entering, while that is within ``until``), whose firing enqueues a
step row. Workers run step rows outside any transaction (``service/steps/steps.py``).
Keys carry the visit, so a re-entered state starts anew. (A ``step`` timer armed
by an older version still fires and enqueues its step: ``service/steps/step_queue.py``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow.core.clocks import calendars, clocks
from taskflow.core.definition import budgets as bu
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import ACTIVE, RunView

STEP, EVERY = "step", "every"
#: The kinds of step rows: an automatic state's action, an action beside slots on entry,
#: recurring work, a timeout's action.
ACTION, ENTRY, EVERY_STEP, TIMEOUT = "action", "entry", "every", "timeout"


@dataclass(frozen=True)
class DueStep:
    """A step row to add, due at ``due_at`` (a key that exists adds nothing)."""

    key: str
    run_id: str
    visit: int
    state: str
    kind: str
    action: str
    due_at: datetime


def step_key(run: RunView) -> str:
    """The key of the ``step`` timer (and step row) of the run's current visit."""
    return f"{run.id}:{run.visit}:{STEP}"


def due_steps(definition: Definition, run: RunView) -> list[DueStep]:
    """The step row of the current state's action, due when the run entered the state
    (none when the state has no action or the run is not active). Written by the unit of
    work that enters the state; planned again while the run stays, it adds nothing."""
    if run.status != ACTIVE:
        return []
    state = definition.state(run.state)
    path = state.action_path
    if path is None:
        return []
    kind = ACTION if state.automatic else ENTRY
    return [DueStep(step_key(run), run.id, run.visit, run.state, kind, path, run.state_entered_at)]


def _offset(
    budget: bu.Budget, run: RunView, definition: Definition, registry: calendars.Registry
) -> tuple[calendars.BusinessClock, timedelta] | None:
    resolved = bu.resolve_budget(budget, run.subject, definition.calendar)
    if resolved is None:
        return None
    cal: calendars.BusinessClock = (
        calendars.REAL_TIME
        if resolved.kind == "real" or resolved.calendar is None
        else registry.get(resolved.calendar)
    )
    return cal, resolved.business_time(clocks.day_length(cal))


def every_due(
    definition: Definition,
    run: RunView,
    index: int,
    firing: int,
    registry: calendars.Registry,
) -> datetime | None:
    """When the ``firing``-th (1-based) run of the state's ``every[index]`` falls due; None
    past its ``until`` (measured from entering the state, on the interval's clock)."""
    every = definition.state(run.state).every[index]
    interval = _offset(every.interval, run, definition, registry)
    until = _offset(every.until, run, definition, registry)
    if interval is None or until is None or interval[1] <= timedelta(0):
        return None
    cal, step = interval
    if step * firing > until[1]:
        return None
    return cal.add(run.state_entered_at, step * firing)


def specs(
    definition: Definition, run: RunView, registry: calendars.Registry, fired: Mapping[str, int]
) -> list[tuple[str, str, str, datetime]]:
    """(key, kind, ref, due) of the ``every`` timers the run's current state needs now
    (a state's action needs none: its step row is written at once, :func:`due_steps`)."""
    if run.status != ACTIVE:
        return []
    state = definition.state(run.state)
    found = []
    for index in range(len(state.every)):
        key = f"{run.id}:{run.visit}:{EVERY}:{index}"
        due = every_due(definition, run, index, fired.get(key, 0) + 1, registry)
        if due is not None:
            found.append((key, EVERY, str(index), due))
    return found
