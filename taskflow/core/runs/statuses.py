"""Slot and run statuses, and the one table of a slot's legal moves.

``MOVES[status, move]`` is the status a slot takes when ``move`` is made from
``status``; a pair missing from the table is a move the slot cannot make, and
the slot code (``core/slots/slots.py``, the engine) refuses it by consulting
:func:`allows` / :func:`after` instead of comparing strings. Who may make a
move (holder, candidate, delegate) is decided beside it, not here.

The values are the strings the ``slot.status`` and ``run.status`` columns hold
(``StrEnum`` members compare equal to them); statuses written in ``.sql`` files
are checked against these enums by a unit test.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from taskflow.core.common.transitions import Transitions


class SlotStatus(StrEnum):
    """Every status a slot can have, in lifecycle order."""

    #: Created, waits for a condition or its turn before it opens.
    PENDING = "pending"
    #: Anyone its candidate rule admits may claim or complete it.
    OPEN = "open"
    #: Held by one person (``holder``).
    CLAIMED = "claimed"
    #: Done: its event was received.
    SATISFIED = "satisfied"
    #: No longer wanted (its run moved on or ended).
    CANCELLED = "cancelled"
    #: Its expiry came before its event (``Slot(expires=...)``, docs/sla.md "Expiry").
    EXPIRED = "expired"


class RunStatus(StrEnum):
    """Every status a run can have."""

    ACTIVE = "active"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    #: A delayed start (``startAt``): waits for its start timer; visible and cancellable.
    SCHEDULED = "scheduled"


class StepStatus(StrEnum):
    """Every status an automatic step can have (``step.status``, docs/automatic-steps.md)."""

    #: Waits for its next attempt (``due_at``).
    DUE = "due"
    #: A worker runs it; ``due_at`` is the end of the worker's lease.
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    #: Its last attempt failed and an ``on_error`` route moved the run.
    FAILED = "failed"
    #: Its last attempt failed and nothing took it: an operator retries it.
    PARKED = "parked"
    #: The run left the state first.
    CANCELLED = "cancelled"


class ChildStatus(StrEnum):
    """Where a child run stands for its parent (``run_child.status``, docs/composition.md)."""

    #: To be started by a worker (the parent just entered the state).
    STARTING = "starting"
    #: Running.
    LIVE = "live"
    #: The parent was cancelled: a worker cancels the child.
    CANCELLING = "cancelling"
    #: The child ended: a worker resumes the parent (once).
    ENDED = "ended"
    #: Done with: the parent read the outcome (or had ended, or never started it).
    SETTLED = "settled"
    #: Cut loose by an operator: it runs on, and resumes no one.
    DETACHED = "detached"


class SlotMove(StrEnum):
    """What can happen to a slot."""

    #: A pending slot's turn comes (or its condition holds).
    OPEN = "open"
    #: A candidate takes it.
    CLAIM = "claim"
    #: Its holder (or a delegate) hands it back to the pool.
    RELEASE = "release"
    #: Its holder or a delegate gives it to a candidate.
    ASSIGN = "assign"
    #: An escalation hands it to a person.
    REASSIGN_TO_PERSON = "reassign_to_person"
    #: An escalation returns it to a team's pool.
    REASSIGN_TO_POOL = "reassign_to_pool"
    #: Its event arrives (from the holder, or a candidate when open).
    COMPLETE = "complete"
    #: The run moves on or ends without it.
    CANCEL = "cancel"
    #: Its expiry instant came first (the holder, if any, is released).
    EXPIRE = "expire"


_S, _M = SlotStatus, SlotMove

#: Each move: the statuses it may be made from, and the status after it; any other
#: (status, move) pair is refused.
MOVES: Final[Transitions[SlotStatus, SlotMove]] = Transitions(
    "slot",
    SlotStatus,
    {
        _M.OPEN: ((_S.PENDING,), _S.OPEN),
        _M.CLAIM: ((_S.OPEN,), _S.CLAIMED),
        _M.RELEASE: ((_S.CLAIMED,), _S.OPEN),
        _M.ASSIGN: ((_S.OPEN, _S.CLAIMED), _S.CLAIMED),
        _M.REASSIGN_TO_PERSON: ((_S.OPEN, _S.CLAIMED), _S.CLAIMED),
        _M.REASSIGN_TO_POOL: ((_S.OPEN, _S.CLAIMED), _S.OPEN),
        _M.COMPLETE: ((_S.OPEN, _S.CLAIMED), _S.SATISFIED),
        _M.CANCEL: ((_S.PENDING, _S.OPEN, _S.CLAIMED), _S.CANCELLED),
        _M.EXPIRE: ((_S.OPEN, _S.CLAIMED), _S.EXPIRED),
    },
)

#: Statuses of a slot that still waits (it can be acted on, now or later).
LIVE: Final[frozenset[SlotStatus]] = frozenset(
    status for status, move in MOVES if move is SlotMove.CANCEL
)
#: Statuses of a slot that is over (no move leaves them).
ENDED: Final[frozenset[SlotStatus]] = frozenset(SlotStatus) - {s for s, _ in MOVES}


#: Whether a slot in ``status`` can make ``move``.
allows = MOVES.allows
#: The status after ``move`` from ``status`` (``ValueError`` for a move the table lacks).
after = MOVES.after
