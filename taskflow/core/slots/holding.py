"""Who held a slot, and for how long: the timeline's moves folded onto the slot.

The SLA report needs a live slot's first pickup and its held time. The
timeline says both (each claim or assignment holds the slot until the next
move), but reading it per slot was the report's costliest probe. So every
transition that writes one of these moves also folds it into the slot here,
and the slot row carries what its timeline says: ``picked_at`` (the first
claim or assignment), ``held_us`` (held intervals already closed) and
``held_since`` (the start of the open one, if any). Held time at an instant
``t`` is then ``held_us`` plus ``t - held_since``.

Claims, assignments, releases, completions and cancellations move a slot;
so does an escalation's reassignment (``slot.reassigned``), which holds the
slot when it hands it to a person and not when it returns it to a team's
pool: its timeline line says which (``details.held``), and a reassignment
written before lines said so is not a move (the timeline reading never
counted one). A ``slot.disarmed`` cancellation is not a move.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from taskflow.core.common import durations
from taskflow.core.runs.model import SlotView

#: Timeline kinds that start held time (claimed, assigned), and those that always move a slot.
HELD_KINDS = ("slot.claimed", "slot.assigned")
MOVE_KINDS = (*HELD_KINDS, "slot.released", "slot.satisfied", "slot.cancelled", "slot.expired")
#: An escalation's reassignment: a move when its line says whether it holds (``held``).
REASSIGNED = "slot.reassigned"


def moved(slot: SlotView, kind: str, at: datetime) -> SlotView:
    """``slot`` with the timeline line ``kind`` at ``at`` folded in (unchanged for others).

    The open held interval (if any) closes at ``at``; a claim or assignment
    opens a new one, and the first of them is the slot's pickup.
    """
    if kind not in MOVE_KINDS:
        return slot
    return _fold(slot, at, holds=kind in HELD_KINDS)


def reassigned(slot: SlotView, at: datetime, *, held: bool) -> SlotView:
    """``slot`` with an escalation's reassignment at ``at`` folded in: to a person (``held``)
    it holds the slot from ``at`` (the first hold is the pickup); to a team's pool it ends
    the hold."""
    return _fold(slot, at, holds=held)


def _fold(slot: SlotView, at: datetime, *, holds: bool) -> SlotView:
    held_us = slot.held_us
    if slot.held_since is not None:
        # The timeline counts an interval only when it has a length (``at < until``).
        held_us += max(0, (at - slot.held_since) // durations.US)
    if holds:
        return dataclasses.replace(
            slot, picked_at=slot.picked_at or at, held_us=held_us, held_since=at
        )
    return dataclasses.replace(slot, held_us=held_us, held_since=None)
