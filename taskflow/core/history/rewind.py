"""Undo (and redo) a run's latest state change: the decision, pure.

:func:`undo` re-enters the state the run stood in before its latest change
(``undo.target`` decides whether that may happen) and reopens the slots that
change ended, as they were: a slot completed by the change (satisfied at the
instant the run left) or cancelled by it goes back to its holder (claimed), to
its pool (open) or, never opened, to waiting for its sibling (pending); a slot
that had expired in that visit stands expired in the visit the undo returns to
(its state's completion and ``expired.<slot>`` routes count it). Clocks: the
time between leaving and the undo does not count.
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
from taskflow.core.runs.model import (
    CANCELLED,
    CLAIMED,
    EXPIRED,
    OPEN,
    PENDING,
    SATISFIED,
    Outcome,
    RunView,
    SlotView,
)


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


def _status_before(view: SlotView) -> str:
    """What a slot the change completed or cancelled stood at: held, in its pool, or still
    waiting for a sibling (``after``: never opened, so it waits again)."""
    if view.opened_at is None:
        return PENDING
    return CLAIMED if view.holder is not None else OPEN


def reopened(view: SlotView, *, visit: int, left_at: datetime, now: datetime) -> SlotView:
    """``view`` as it stood before the change at ``left_at``, in the new visit."""
    return dataclasses.replace(
        view,
        visit=visit,
        status=_status_before(view),
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
    lapsed = _expired_in_visit_left(decision.slots.values(), found.state, run.visit)
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
    for view in lapsed:  # expired before the change: expired again, in the visit it returns to
        decision.put(dataclasses.replace(view, visit=decision.run.visit, version=view.version + 1))
    return decision.outcome()


def _expired_in_visit_left(views: Iterable[SlotView], state: str, visit: int) -> list[SlotView]:
    """The slots of ``state`` that had expired in the visit the change left (the latest
    visit of ``state`` before ``visit``): the state's completion and its ``expired.<slot>``
    routes count them, so the visit the undo returns to holds them as they were."""
    mine = [v for v in views if v.state == state and v.visit < visit]
    if not mine:
        return []
    left = max(v.visit for v in mine)
    return [v for v in mine if v.visit == left and v.status == EXPIRED]
