"""An awaited start: what ``startRun``'s ``waitFor`` waits for, and its bounds (pure).

``STATE``: the run left the state it started in (an automatic step or a timer moved it) or
ended; ``SLOT``: a slot of its current state is open or claimed, or it ended; ``END``: it
ended. The wait is bounded by ``timeoutSeconds`` (1 to 30, default 10); the answer is the
run as it stands when the wait ends, and whether it got there.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Final

from taskflow import errors
from taskflow.core.runs.model import ACTIVE, CLAIMED, OPEN, RunView, SlotView

#: The longest wait a start may ask for, and the wait when none is given (seconds).
MAX_TIMEOUT: Final = 30
DEFAULT_TIMEOUT: Final = 10


class WaitFor(StrEnum):
    """What an awaited start waits for."""

    STATE = "state"
    SLOT = "slot"
    END = "end"


def timeout_of(wait: WaitFor | None, seconds: int | None) -> int | None:
    """The wait's bound in seconds (None: no wait); a bound outside 1..30 is refused."""
    if seconds is not None and not 1 <= seconds <= MAX_TIMEOUT:
        raise errors.ValidationError(
            f"timeoutSeconds must be between 1 and {MAX_TIMEOUT} (got {seconds}); a longer "
            "wait would hold the request: start the run, then read it or subscribe to its "
            "events (docs/events.md).",
            field="timeoutSeconds",
        )
    if wait is None:
        if seconds is not None:
            raise errors.ValidationError(
                "timeoutSeconds bounds a wait: give waitFor (STATE, SLOT or END) too.",
                field="timeoutSeconds",
            )
        return None
    return DEFAULT_TIMEOUT if seconds is None else seconds


def reached(
    wait: WaitFor, started: tuple[str, int], run: RunView, slots: Iterable[SlotView]
) -> bool:
    """Whether ``run`` (with ``slots``) is where ``wait`` asked; ``started`` is the state and
    visit the start left it in."""
    if run.status != ACTIVE:
        return True
    if wait is WaitFor.END:
        return False
    if wait is WaitFor.STATE:
        return (run.state, run.visit) != tuple(started)
    return any(s.status in (OPEN, CLAIMED) and s.visit == run.visit for s in slots)
