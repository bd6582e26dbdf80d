"""Typed refusals: the expected ways a move on a run or slot is turned down.

Each is a :class:`taskflow.errors.TaskflowError` with a stable ``code`` and the
facts a client needs (who holds the slot, its status, the current version...).
The API turns them into payload union members; nothing is changed when one is raised.
"""

from __future__ import annotations

from taskflow import errors


class Refusal(errors.TaskflowError):
    """Base of every refusal of a move on a run or slot."""

    code = "REFUSED"


class NotCandidate(Refusal):
    code = "NOT_CANDIDATE"


class AlreadyClaimed(Refusal):
    code = "ALREADY_CLAIMED"


class NotHolder(Refusal):
    code = "NOT_HOLDER"


class NotDelegate(Refusal):
    code = "NOT_DELEGATE"


class SlotNotOpen(Refusal):
    code = "SLOT_NOT_OPEN"


class StaleVersion(Refusal):
    code = "STALE_VERSION"


class WrongEvent(Refusal):
    code = "WRONG_EVENT"


class RunNotActive(Refusal):
    code = "RUN_NOT_ACTIVE"


class MoveNotAllowed(Refusal):
    code = "MOVE_NOT_ALLOWED"


class NotRaiser(Refusal):
    """The event's ``raisers`` (or the application's grants) do not admit the caller."""

    code = "NOT_RAISER"


class NoSlotWaiting(Refusal):
    code = "NO_SLOT_WAITING"


class AmbiguousEvent(Refusal):
    code = "AMBIGUOUS_EVENT"


class RunExists(Refusal):
    code = "RUN_EXISTS"


class NothingToClaim(Refusal):
    code = "NOTHING_TO_CLAIM"


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
