"""What a pausing state holds for the state the run came from.

Entering a ``pausing=True`` state from an ordinary one keeps that state's live
slots as they are: holders stay, their clocks pause. Returning to that state
resumes the same slots (clocks carry on where they stopped) instead of opening
new ones; moving anywhere else cancels them (docs/definitions.md, "Pausing").
"""

from __future__ import annotations

import dataclasses

from taskflow.core.clocks import deadlines
from taskflow.core.definition.model import State
from taskflow.core.runs.decision import Decision
from taskflow.core.runs.model import SlotView


def held(decision: Decision) -> list[SlotView]:
    """Live slots of an earlier visit: what a pausing state holds for the state before it."""
    return [s for s in decision.slots.values() if s.live and s.visit != decision.run.visit]


def holds_on_leaving(source: State, target: State) -> bool:
    """Whether leaving ``source`` for ``target`` holds ``source``'s live slots."""
    return target.pausing and not source.pausing


def hold_live(decision: Decision) -> None:
    """Keep this state's live slots (holders and all) with their clocks paused."""
    for view in decision.current():
        if view.live:
            decision.put(deadlines.paused(view, decision.now))
            decision.log("slot.held", slot_id=view.id, slot=view.name, state=view.state)


def settle_held(decision: Decision, entered: State, held_views: list[SlotView]) -> bool:
    """Resume or cancel the held slots once the run has entered ``entered``.

    True when they resumed: the run is back in the state they belong to, which
    then opens no new slots. A pausing state keeps holding them; a terminal or
    any other state cancels them.
    """
    if not held_views or entered.pausing:
        return False
    if held_views[0].state == entered.name and not entered.terminal:
        _resume(decision, held_views)
        return True
    decision.cancel_slots(held_views, reason=f"the run moved on to {entered.name}")
    return False


def _resume(decision: Decision, held_views: list[SlotView]) -> None:
    for view in sorted(held_views, key=lambda s: (s.name, s.item_index or 0)):
        back = dataclasses.replace(view, visit=decision.run.visit, version=view.version + 1)
        decision.put(deadlines.resumed(back, decision.now))
        decision.log("slot.resumed", slot_id=view.id, slot=view.name, state=view.state)
