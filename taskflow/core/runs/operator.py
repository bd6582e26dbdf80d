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

from taskflow.core import deadlines
from taskflow.core import refusals as core_refusals
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import refusals, states
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import Outcome, RunView, SlotView

ClocksUnchanged = core_refusals.ClocksUnchanged


def goto(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    target: str,
    reason: str,
    now: datetime,
    actor: str,
    new_id: NewId,
) -> Outcome:
    """Move an active run to ``target`` as the engine does for a move: exit hook, live slots
    cancelled (or held, entering a pausing state), enter hook, slots opened, then settle."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    decision.require_active()
    if not definition.has_state(target):
        known = ", ".join(s.name for s in definition.states)
        raise refusals.MoveNotAllowed(
            f"Workflow {definition.name!r} version {definition.version} has no state "
            f"{target!r}; its states are: {known}.",
            reasons=[f"no state {target!r}"],
        )
    decision.log("run.goto", reason=reason, source=run.state, target=target)
    states.transition(decision, target, reason=f"goto by {actor}: {reason}", via="goto")
    states.settle(decision)
    return decision.outcome()


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
) -> Outcome:
    """Stand every running clock of the current state's live slots still from ``now``
    (``pause``), or let every paused one run again."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=lambda: "")
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
