"""The timers of automatic steps: when a state's action, and each ``every``, falls due.

Pure. A state with an action arms one ``step`` timer due when the run entered
the state; an ``every`` arms an ``every`` timer for its next firing (the n-th at
``n * interval`` after entering, while that is within ``until``). Firing either
enqueues a step row that workers run outside any transaction (``service/steps.py``).
Keys carry the visit, so a re-entered state starts anew.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from taskflow.core import calendars, clocks
from taskflow.core.definition import budgets as bu
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import ACTIVE, RunView

STEP, EVERY = "step", "every"


def step_key(run: RunView) -> str:
    """The key of the ``step`` timer (and step row) of the run's current visit."""
    return f"{run.id}:{run.visit}:{STEP}"


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
    """(key, kind, ref, due) of the step timers the run's current state needs now."""
    if run.status != ACTIVE:
        return []
    state = definition.state(run.state)
    found = []
    if state.action is not None and not fired.get(step_key(run), 0):
        found.append((step_key(run), STEP, "action", run.state_entered_at))
    for index in range(len(state.every)):
        key = f"{run.id}:{run.visit}:{EVERY}:{index}"
        due = every_due(definition, run, index, fired.get(key, 0) + 1, registry)
        if due is not None:
            found.append((key, EVERY, str(index), due))
    return found
