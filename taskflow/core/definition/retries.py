"""Retry policies of automatic steps, as values, and when the next attempt falls due.

``Fixed(wait)``, ``Linear(first, step)`` and ``Exponential(first, factor,
max_wait)`` each carry ``max_attempts`` (the first attempt included), an
optional ``jitter`` (a fraction of the wait added at random, 0 to 1), a
per-attempt ``timeout`` and the kind of time they wait in: ``real`` (the wall
clock) or ``business`` (the working hours of ``calendar``, else the
workflow's). ``final`` names exception classes never retried (the step's
``on_error`` route, or attention, follows at once); ``transient`` names the
only classes retried (empty: every class not final).

:func:`next_attempt_at` is pure: the attempt number that just failed, ``now``,
the calendar to wait on and a random draw in [0, 1) give the instant of the
next attempt, or None when no attempt is left.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from taskflow.core.clocks.calendars import BusinessClock

TimeKind = Literal["real", "business"]


@dataclass(frozen=True, kw_only=True)
class Policy(ABC):
    """What every policy shares (see the module docs); a policy is one of its subclasses."""

    max_attempts: int = 3
    jitter: float = 0.0
    timeout: timedelta | None = None
    time: TimeKind = "real"
    calendar: str | None = None
    final: Sequence[str] = ()
    transient: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "final", tuple(_names(self.final)))
        object.__setattr__(self, "transient", tuple(_names(self.transient)))

    kind = "policy"

    @abstractmethod
    def base_wait(self, attempt: int) -> timedelta:
        """The wait after failed attempt ``attempt`` (1-based), before jitter."""

    def describe(self) -> str:
        """``exponential from 10s x2 up to 1h, 5 attempts, real time``."""
        return f"{self._describe()}, {self.max_attempts} attempts, {self.time} time"

    def _describe(self) -> str:
        return self.kind

    def to_json(self) -> Any:
        """The policy as plain JSON (waits in seconds)."""
        return {
            "kind": self.kind,
            "max_attempts": self.max_attempts,
            "jitter": self.jitter,
            "timeout": self.timeout.total_seconds() if self.timeout else None,
            "time": self.time,
            "calendar": self.calendar,
            "final": list(self.final),
            "transient": list(self.transient),
            **self._parts(),
        }

    def _parts(self) -> dict[str, Any]:
        return {}

    def waits(self) -> tuple[timedelta, ...]:
        """Every wait the policy declares (checked to be positive at load)."""
        return ()


def _names(classes: Sequence[str | type]) -> list[str]:
    """Exception classes given as classes or names, as names (``ValueError``, ``mod.Error``)."""
    return [c if isinstance(c, str) else c.__name__ for c in classes]


@dataclass(frozen=True, kw_only=True)
class Fixed(Policy):
    """The same ``wait`` between attempts."""

    wait: timedelta
    kind = "fixed"

    def base_wait(self, attempt: int) -> timedelta:
        return self.wait

    def _describe(self) -> str:
        return f"every {_span(self.wait)}"

    def _parts(self) -> dict[str, Any]:
        return {"wait": self.wait.total_seconds()}

    def waits(self) -> tuple[timedelta, ...]:
        return (self.wait,)


@dataclass(frozen=True, kw_only=True)
class Linear(Policy):
    """``first``, then ``first + step``, ``first + 2 step``..."""

    first: timedelta
    step: timedelta
    kind = "linear"

    def base_wait(self, attempt: int) -> timedelta:
        return self.first + self.step * (attempt - 1)

    def _describe(self) -> str:
        return f"linear from {_span(self.first)} +{_span(self.step)}"

    def _parts(self) -> dict[str, Any]:
        return {"first": self.first.total_seconds(), "step": self.step.total_seconds()}

    def waits(self) -> tuple[timedelta, ...]:
        return (self.first,)


@dataclass(frozen=True, kw_only=True)
class Exponential(Policy):
    """``first``, then ``first * factor``, ``first * factor**2``..., never above ``max_wait``."""

    first: timedelta
    factor: float = 2.0
    max_wait: timedelta = timedelta(hours=1)
    kind = "exponential"

    def base_wait(self, attempt: int) -> timedelta:
        seconds = self.first.total_seconds()
        cap = self.max_wait.total_seconds()
        for _ in range(attempt - 1):
            seconds *= self.factor
            if seconds >= cap:
                return self.max_wait
        return timedelta(seconds=min(seconds, cap))

    def _describe(self) -> str:
        return f"exponential from {_span(self.first)} x{self.factor:g} up to {_span(self.max_wait)}"

    def _parts(self) -> dict[str, Any]:
        return {
            "first": self.first.total_seconds(),
            "factor": self.factor,
            "max_wait": self.max_wait.total_seconds(),
        }

    def waits(self) -> tuple[timedelta, ...]:
        return (self.first, self.max_wait)


#: No retry block: one attempt, then ``on_error`` (or attention).
ONCE = Fixed(wait=timedelta(seconds=1), max_attempts=1)


def _span(t: timedelta) -> str:
    seconds = t.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def wait_after(policy: Policy, attempt: int, draw: float) -> timedelta:
    """The wait after failed attempt ``attempt`` with jitter: ``base * (1 + jitter * draw)``."""
    base = policy.base_wait(attempt)
    return base + base * (policy.jitter * min(max(draw, 0.0), 1.0))


def retryable(policy: Policy, error_classes: Sequence[str]) -> bool:
    """Whether an error of these classes (its class and its bases' names) may be retried."""
    names = set(error_classes)
    if names & set(policy.final):
        return False
    return not policy.transient or bool(names & set(policy.transient))


def next_attempt_at(
    policy: Policy,
    attempt: int,
    now: datetime,
    calendar: BusinessClock,
    draw: float = 0.0,
    error_classes: Sequence[str] = (),
) -> datetime | None:
    """When attempt ``attempt + 1`` falls due after attempt ``attempt`` failed at ``now``.

    None when it was the last (``max_attempts`` reached) or the error is not retryable.
    ``calendar`` is the clock the policy waits on (REAL_TIME for real time).
    """
    if attempt >= policy.max_attempts or not retryable(policy, error_classes):
        return None
    return calendar.add(now, wait_after(policy, attempt, draw))
