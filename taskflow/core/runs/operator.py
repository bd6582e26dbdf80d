"""An operator's hand on a run: move it to any state, pause and resume its clocks.

Each entry point returns an :class:`~taskflow.core.runs.model.Outcome` like the
engine's, with the operator and their reason on the timeline, or raises a
refusal having changed nothing. Only the current visit's live slots are
touched: slots a pausing state holds for an earlier state keep their pause.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime

from taskflow.core.clocks import deadlines
from taskflow.core.common import refusals as core_refusals
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import Outcome, RunView, SlotView

ClocksUnchanged = core_refusals.ClocksUnchanged


#: Move an active run to any state of its definition as an operator (actor and reason on
#: the timeline as ``run.goto``); an unknown state is refused.
goto = functools.partial(engine.goto, via="goto")


def _running(view: SlotView) -> bool:
    return view.live and any(c.met_at is None and not c.paused for c in view.clocks)


def _paused(view: SlotView) -> bool:
    return view.live and any(c.met_at is None and c.paused for c in view.clocks)


def hand_on_clocks(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    reason: str,
    now: datetime,
    actor: str,
    pause: bool,
    new_id: NewId,
) -> Outcome:
    """Stand every running clock of the current state's live slots still from ``now``
    (``pause``), or let every paused one run again."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    decision.require_active()
    if not pause and definition.state(run.state).pausing:
        raise ClocksUnchanged(
            f"{run.state} is a pausing state: its clocks stand still by definition; move the "
            "run on (or goto another state) to resume them.",
        )
    touched = [v for v in decision.current() if (_running if pause else _paused)(v)]
    if not touched:
        raise ClocksUnchanged(
            f"No clock of the run runs in {run.state}: nothing to pause (see its slots' clocks)."
            if pause
            else f"No clock of the run is paused in {run.state}: nothing to resume.",
        )
    change, line = (
        (deadlines.paused, "clocks.paused") if pause else (deadlines.resumed, "clocks.resumed")
    )
    for view in touched:
        decision.put(change(view, now))
        decision.log(line, slot_id=view.id, reason=reason, slot=view.name)
    return decision.outcome()


#: pauseClocks and resumeClocks.
pause_clocks = functools.partial(hand_on_clocks, pause=True)
resume_clocks = functools.partial(hand_on_clocks, pause=False)
