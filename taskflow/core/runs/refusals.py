"""The refusals of moves on a run or slot (defined in :mod:`taskflow.core.common.refusals`)."""

from __future__ import annotations

from taskflow.core.common.refusals import (
    AlreadyCandidate,
    AlreadyClaimed,
    AmbiguousEvent,
    MoveNotAllowed,
    NoSlotWaiting,
    NotCandidate,
    NotDelegate,
    NothingToClaim,
    NotHolder,
    NotRaiser,
    Refusal,
    RunExists,
    RunNotActive,
    SlotNotOpen,
    StaleVersion,
    SubjectGone,
    WrongEvent,
)

__all__ = [
    "AlreadyCandidate",
    "AlreadyClaimed",
    "AmbiguousEvent",
    "MoveNotAllowed",
    "NoSlotWaiting",
    "NotCandidate",
    "NotDelegate",
    "NotHolder",
    "NotRaiser",
    "NothingToClaim",
    "Refusal",
    "RunExists",
    "RunNotActive",
    "SlotNotOpen",
    "StaleVersion",
    "SubjectGone",
    "WrongEvent",
    "check_run_version",
]


def check_run_version(expected: int | None, version: int, state: str) -> None:
    """Refuse a change of a run picked on a stale view (``expected`` is not its ``version``).

    ``None`` means "no guard". The refusal names the run's version and state now, so a
    client can tell "the card moved" from "the move is not allowed".
    """
    if expected is None or expected == version:
        return
    raise StaleVersion(
        f"The run changed since you loaded it (version {expected}, now {version}; it is in "
        f"state {state!r} now): reload it and choose again.",
        current_version=version,
        current_state=state,
    )
