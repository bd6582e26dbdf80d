"""Who held a slot, and for how long: the timeline's moves folded onto the slot.

The SLA report needs a live slot's first pickup and its held time. The
timeline says both (each claim or assignment holds the slot until the next
move), but reading it per slot was the report's costliest probe. So every
transition that writes one of these moves also folds it into the slot here,
and the slot row carries what its timeline says: ``picked_at`` (the first
claim or assignment), ``held_us`` (held intervals already closed) and
``held_since`` (the start of the open one, if any). Held time at an instant
``t`` is then ``held_us`` plus ``t - held_since``.

Only these kinds move: an escalation's ``slot.reassigned`` and a
``slot.disarmed`` cancellation are not, exactly as the report's timeline
reading has always counted them (``store/measure_sql.held_lateral``).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from taskflow.core.runs.model import SlotView

#: Timeline kinds that start held time (claimed, assigned), and every kind that moves a slot.
HELD_KINDS = ("slot.claimed", "slot.assigned")
MOVE_KINDS = (*HELD_KINDS, "slot.released", "slot.satisfied", "slot.cancelled")
_US = timedelta(microseconds=1)


def moved(slot: SlotView, kind: str, at: datetime) -> SlotView:
    """``slot`` with the timeline line ``kind`` at ``at`` folded in (unchanged for others).

    The open held interval (if any) closes at ``at``; a claim or assignment
    opens a new one, and the first of them is the slot's pickup.
    """
    if kind not in MOVE_KINDS:
        return slot
    held_us = slot.held_us
    if slot.held_since is not None:
        # The timeline counts an interval only when it has a length (``at < until``).
        held_us += max(0, (at - slot.held_since) // _US)
    if kind in HELD_KINDS:
        return dataclasses.replace(
            slot, picked_at=slot.picked_at or at, held_us=held_us, held_since=at
        )
    return dataclasses.replace(slot, held_us=held_us, held_since=None)
