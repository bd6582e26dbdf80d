"""What a run deadline's breach action does to the run, decided purely (the worker's firing,
``service/clocks/deadline_firing.py``, and the SLA dry run carry it out alike).

``raise_event`` deposits the event into the open slot of the current state waiting for it
(as ``raiseEvent`` would, on the run's behalf); ``move`` moves the run as a timeout's move
does; ``cancel`` ends it. Notices are planned by ``firing.effects`` like every timer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskflow.core.definition.workflow import Definition
from taskflow.core.runs import engine
from taskflow.core.runs.decision import NewId
from taskflow.core.runs.model import OPEN, Outcome, RunView, SlotView

#: Who the timeline names for a deadline's raised event.
ACTOR = "timer"


def outcome(
    definition: Definition,
    run: RunView,
    slots: Sequence[SlotView],
    kind: str,
    target: str | None,
    *,
    reason: str,
    now: datetime,
    new_id: NewId,
) -> Outcome | None:
    """The outcome of one breach action (None: nothing to do, e.g. no slot waits for the
    event, or a notify: planned elsewhere)."""
    if kind == "move" and target is not None:
        return engine.goto(
            definition, run, slots, target=target, reason=reason, now=now, actor=None,
            new_id=new_id,
        )  # fmt: skip
    if kind == "cancel":
        return engine.cancel(
            definition, run, slots, reason=reason, now=now, actor=None, new_id=new_id
        )
    if kind == "raise_event" and target is not None:
        here = (s for s in slots if s.visit == run.visit and s.status == OPEN)
        waiting = next((s for s in here if s.waits_for == target), None)
        if waiting is None:
            return None
        return engine.deposit(
            definition, run, slots, slot_id=waiting.id, event=target, payload={},
            actor=ACTOR, actor_keys=frozenset(), expected_version=None, now=now,
            new_id=new_id, on_behalf=True,
        )  # fmt: skip
    return None
