"""``REAL_TIME``: the clock that never closes, behind the same interface as ``Calendar``.

SLA code can then treat "4 real hours" and "4 business hours" uniformly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from taskflow.core.clocks.calendars import errors, explain


class BusinessClock(Protocol):
    """What SLA code needs from a calendar (``Calendar`` and ``REAL_TIME`` both fit)."""

    name: str
    tz: ZoneInfo

    def add(self, start: datetime, budget: timedelta) -> datetime: ...

    def elapsed(self, start: datetime, end: datetime) -> timedelta: ...

    def is_open(self, t: datetime) -> bool: ...

    def next_open(self, t: datetime) -> datetime: ...

    def next_close(self, t: datetime) -> datetime: ...

    def explain(self, start: datetime, budget: timedelta) -> explain.Explanation: ...


def _aware(what: str, t: datetime) -> datetime:
    if t.utcoffset() is None:
        raise errors.NaiveDatetime(what, t)
    try:
        return t.astimezone(UTC)
    except OverflowError:
        raise _outside(what, t) from None


def _outside(what: str, t: datetime) -> errors.BudgetOutOfRange:
    return errors.BudgetOutOfRange(
        f"{what} {t.isoformat()} is too close to the years datetime can hold (1 to 9999): "
        "pass an instant within them.",
    )


class RealTime:
    """Plain UTC arithmetic: always open, ``add`` adds, ``elapsed`` subtracts."""

    def __init__(self) -> None:
        self.name = "real-time"
        self.tz = ZoneInfo("UTC")

    def __repr__(self) -> str:
        return "<RealTime>"

    def add(self, start: datetime, budget: timedelta) -> datetime:
        """``start + budget`` on the absolute time line, in UTC."""
        if budget < timedelta(0):
            raise errors.BudgetOutOfRange(
                f"budget {budget} is negative: pass a duration of zero or more.",
                budget=str(budget),
            )
        begin = _aware("start", start)
        try:
            return begin + budget
        except OverflowError:
            raise errors.BudgetOutOfRange(
                f"budget {budget} from {begin.isoformat()} runs past the year 9999: pass a "
                "shorter budget.",
                budget=str(budget),
            ) from None

    def elapsed(self, start: datetime, end: datetime) -> timedelta:
        """``end - start`` on the absolute time line; zero when ``end <= start``."""
        delta = _aware("end", end) - _aware("start", start)
        return max(delta, timedelta(0))

    def is_open(self, t: datetime) -> bool:
        """Always True (after checking ``t`` is aware)."""
        _aware("t", t)
        return True

    def next_open(self, t: datetime) -> datetime:
        """``t`` itself, in UTC."""
        return _aware("t", t).astimezone(self.tz)

    def next_close(self, t: datetime) -> datetime:
        """Real time never closes: raises ``NeverCloses``."""
        _aware("t", t)
        raise errors.NeverCloses("real time never closes.", calendar=self.name)

    def explain(self, start: datetime, budget: timedelta) -> explain.Explanation:
        """One stretch from ``start`` to the due instant; nothing skipped."""
        due = self.add(start, budget)
        begin = _aware("start", start)
        windows = (explain.Consumed(begin, due),) if due > begin else ()
        return explain.Explanation(self.name, begin, budget, due, windows, ())


REAL_TIME = RealTime()
