"""Undo (and redo) a run's latest state change: the decision, pure.

:func:`undo` re-enters the state the run stood in before its latest change
(``undo.target`` decides whether that may happen) and reopens the slots that
change ended, as they were: a slot completed by the change (satisfied at the
instant the run left) or cancelled by it goes back to its holder (claimed) or to
its pool (open). Clocks: the time between leaving and the undo does not count.
Each clock of a reopened slot stands paused from the instant the run left until
now, as a pausing state would have held it; the clock met by the completion is
met no more. The current state's live slots are cancelled, as any move cancels
them; a pausing state's held slots resume when the undo returns to their state.
Hooks do not run and side effects are not compensated (docs/history.md, "Undo").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from taskflow.core.clocks import clocks
from taskflow.core.definition.workflow import Definition
from taskflow.core.history import undo as rule
from taskflow.core.history.visits import Line
from taskflow.core.runs import pausing
from taskflow.core.runs.decision import Decision, NewId
from taskflow.core.runs.model import CANCELLED, CLAIMED, OPEN, SATISFIED, Outcome, RunView, SlotView


def _ended_by(view: SlotView, state: str, left_at: datetime) -> bool:
    """The slot of ``state`` that the change at ``left_at`` completed or cancelled."""
    if view.state != state:
        return False
    return (view.status == SATISFIED and view.satisfied_at == left_at) or (
        view.status == CANCELLED and view.cancelled_at == left_at
    )


def _clock_back(clock: clocks.Clock, left_at: datetime, now: datetime) -> clocks.Clock:
    """The clock as it stood when the run left, paused from then until ``now``."""
    if clock.met_at is not None and clock.met_at < left_at:
        return clock  # met before the change (the pickup clock of a claimed slot)
    back = dataclasses.replace(clock, met_at=None)
    if back.paused:  # stood still already when the run left: it stays so
        return back
    return dataclasses.replace(back, pauses=(*back.pauses, clocks.Pause(left_at, now)))


def reopened(view: SlotView, *, visit: int, left_at: datetime, now: datetime) -> SlotView:
    """``view`` as it stood before the change at ``left_at``, in the new visit."""
    return dataclasses.replace(
        view,
        visit=visit,
        status=CLAIMED if view.holder is not None else OPEN,
        satisfied_at=None,
        satisfied_by=None,
        cancelled_at=None,
        version=view.version + 1,
        clocks=tuple(_clock_back(c, left_at, now) for c in view.clocks),
    )


def undo(
    definition: Definition,
    run: RunView,
    slots: Iterable[SlotView],
    *,
    lines: Iterable[Line],
    reason: str,
    actor: str,
    principal: object,
    now: datetime,
    new_id: NewId,
) -> Outcome:
    """Rewind the run's latest state change (a redo when that change was an undo); raises
    the typed refusal of :mod:`taskflow.core.history.undo` having changed nothing."""
    decision = Decision(definition, run, slots, now=now, actor=actor, new_id=new_id)
    decision.require_active()
    found = rule.target(
        definition, lines, actor=actor, principal=principal, subject=dict(run.subject), now=now
    )
    held = pausing.held(decision)
    ended = [v for v in decision.slots.values() if _ended_by(v, found.state, found.left_at)]
    decision.cancel_live(reason="the change was undone")
    state = definition.state(found.state)
    decision.set_run(
        state=found.state, visit=run.visit + 1, state_entered_at=now, unmatched_at=None
    )
    decision.log(
        "state.entered", reason=reason, state=found.state, via="undo", reverses=found.reverses
    )
    pausing.settle_held(decision, state, held)
    for view in sorted(ended, key=lambda s: (s.name, s.item_index or 0)):
        back = reopened(view, visit=decision.run.visit, left_at=found.left_at, now=now)
        decision.put(back)
        decision.log("slot.reopened", slot_id=view.id, slot=view.name, holder=view.holder)
    return decision.outcome()
