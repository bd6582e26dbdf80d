"""A timer row's statuses, and what a failed firing does to it (backoff, then dead).

Which move is legal from which status is :data:`MOVES`, the one table (a
timer row's life: planned ``armed``, then ``fired``, ``cancelled`` or, after
failures, ``dead``; an admin retries or discards a dead one).

A timer whose firing raises is not lost and not retried in a tight loop: it is
tried again after an exponential backoff with jitter, and after
``max_attempts`` failed firings it is parked ``dead`` with its last error,
where an admin sees it (``timers(filter: {state: DEAD})``) and retries or
discards it. Pure: the caller passes ``now`` and the jitter draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from taskflow.core.common.transitions import Transitions


class TimerStatus(StrEnum):
    """Every status a timer row can have (the ``timer.status`` column)."""

    #: Waits for its due instant (after a failure: for its next attempt).
    ARMED = "armed"
    #: Fired; a repeating reminder is re-armed in place instead.
    FIRED = "fired"
    #: No longer wanted (its slot or run moved on, or ended).
    CANCELLED = "cancelled"
    #: Its firing failed ``max_attempts`` times; waits for an admin's retry or discard.
    DEAD = "dead"
    #: A dead timer an admin gave up on (the reason is on the run's timeline).
    DISCARDED = "discarded"


class TimerMove(StrEnum):
    """What can happen to a timer row."""

    #: A use case plans it (again): armed for its due instant, attempts reset.
    PLAN = "plan"
    #: Its firing succeeded (a repeating reminder is planned again instead).
    FIRE = "fire"
    #: Its firing failed and it will be tried again after a backoff.
    FAIL = "fail"
    #: Its firing failed for the last allowed time.
    GIVE_UP = "give_up"
    #: Its slot or run moved on, or ended.
    CANCEL = "cancel"
    #: An admin arms a dead timer again.
    RETRY = "retry"
    #: An admin gives up on a dead timer.
    DISCARD = "discard"


_T, _V = TimerStatus, TimerMove

#: Each move: the statuses it may be made from, and the status after it; any other
#: (status, move) pair is a move a timer cannot make.
MOVES: Transitions[TimerStatus, TimerMove] = Transitions(
    "timer",
    TimerStatus,
    {
        _V.PLAN: ((_T.ARMED, _T.FIRED, _T.CANCELLED), _T.ARMED),
        _V.FIRE: ((_T.ARMED,), _T.FIRED),
        _V.FAIL: ((_T.ARMED,), _T.ARMED),
        _V.GIVE_UP: ((_T.ARMED,), _T.DEAD),
        _V.CANCEL: ((_T.ARMED,), _T.CANCELLED),
        _V.RETRY: ((_T.DEAD,), _T.ARMED),
        _V.DISCARD: ((_T.DEAD,), _T.DISCARDED),
    },
)


@dataclass(frozen=True)
class TimerSpec:
    """A deadline that should be armed: its key, what it belongs to, and when it is due
    (``core/clocks/deadlines.py`` plans them)."""

    key: str
    run_id: str
    slot_id: str | None
    kind: str
    ref: str
    due_at: datetime


@dataclass(frozen=True, kw_only=True)
class TimerRow(TimerSpec):
    """A timer row: a reminder, breach or timeout of a run, by its stable key; its spec, and
    where it stands."""

    id: int
    status: str
    fired: int
    #: Failed firings since it last fired or was (re-)armed (see :func:`after_failure`).
    attempts: int = 0
    #: The last failure, ``Class: message`` (short).
    last_error: str | None = None
    failed_at: datetime | None = None
    #: The due instant its definition planned, while a failure pushed ``due_at`` back.
    planned_at: datetime | None = None

    @property
    def planned(self) -> datetime:
        """The due instant its definition planned (``due_at`` unless a failure moved it)."""
        return self.planned_at if self.planned_at is not None else self.due_at


#: Statuses a use case's reconciliation leaves alone: only an admin moves a timer out of them.
PARKED = frozenset(status for status in TimerStatus if (status, TimerMove.PLAN) not in MOVES)


#: Whether a timer in ``status`` can make ``move``.
allows = MOVES.allows
#: The status after ``move`` from ``status`` (``ValueError`` for a move the table lacks).
after = MOVES.after


#: The longest error text kept on a timer row.
MAX_ERROR = 300


@dataclass(frozen=True)
class RetryPolicy:
    """How failed firings are retried (``TASKFLOW_TIMER_*`` settings)."""

    #: Failed firings after which a timer is parked dead.
    max_attempts: int = 8
    #: The first backoff, in seconds; each further failure doubles it...
    base_seconds: float = 30.0
    #: ... up to this many seconds.
    max_seconds: float = 3600.0

    def backoff(self, attempts: int, jitter: float) -> timedelta:
        """The wait after the ``attempts``-th failure (1 = the first).

        Equal jitter: half the exponential step is kept, the other half is
        scaled by ``jitter`` in [0, 1), so workers that failed together spread out.
        """
        step = min(self.max_seconds, self.base_seconds * 2 ** max(attempts - 1, 0))
        return timedelta(seconds=step / 2 + step / 2 * min(max(jitter, 0.0), 1.0))


@dataclass(frozen=True)
class Failure:
    """What a failed firing makes of its timer row."""

    attempts: int
    status: TimerStatus
    #: The next attempt (the row's new due instant); None once it is dead.
    next_at: datetime | None
    error: str


def after_failure(
    attempts: int, error: BaseException, now: datetime, policy: RetryPolicy, jitter: float
) -> Failure:
    """The row after one more failed firing (``attempts`` failures before this one)."""
    count = attempts + 1
    text = describe(error)
    if count >= policy.max_attempts:
        return Failure(count, after(TimerStatus.ARMED, TimerMove.GIVE_UP), None, text)
    next_at = now + policy.backoff(count, jitter)
    return Failure(count, after(TimerStatus.ARMED, TimerMove.FAIL), next_at, text)


def describe(error: BaseException) -> str:
    """``Class: message``, on one line and at most :data:`MAX_ERROR` characters."""
    message = " ".join(str(error).split())
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"
