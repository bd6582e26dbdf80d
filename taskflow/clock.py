"""Where "now" comes from: injected everywhere, read only at the edges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from taskflow import errors


class Clock(Protocol):
    """A source of the current instant (always timezone-aware, UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real time of this machine."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class AnchoredClock:
    """This machine's time moved onto the database server's.

    Every process of one installation stamps and compares instants (a timer's due time, a
    claim's, a deadline's) with the others': a host whose clock is off would fire timers
    early or late. ``anchor`` sets the offset measured against the database
    (``service/operate/clock_anchor.py``); until then it is this machine's time.
    """

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def anchor(self, offset: timedelta) -> None:
        self.offset = offset


class FrozenClock:
    """A clock that only moves when told to: tests and previews move it explicitly."""

    def __init__(self, start: datetime) -> None:
        self._now = require_aware(start, "FrozenClock start")

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by ``delta`` and return the new instant."""
        if delta < timedelta(0):
            raise errors.ValidationError("A FrozenClock only moves forward; use set() to jump.")
        self._now += delta
        return self._now

    def set(self, instant: datetime) -> None:
        """Jump to ``instant``."""
        self._now = require_aware(instant, "FrozenClock.set")


def require_aware(value: datetime, what: str) -> datetime:
    """Refuse naive datetimes at the boundary: an instant without an offset is ambiguous."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise errors.ValidationError(
            f"{what}: {value.isoformat()} has no UTC offset; pass an aware datetime "
            "(e.g. 2026-12-01T09:00:00+00:00)."
        )
    return value
