"""Why a budget is due when it is: the windows consumed and the days skipped."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

#: At most this many windows are listed; a longer budget is summarised.
MAX_LISTED = 400


def duration(value: timedelta) -> str:
    """``12h30m`` style rendering of a non-negative duration (keeps sub-seconds)."""
    micros = value // timedelta(microseconds=1)
    seconds, micros = divmod(micros, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h{minutes:02d}m"
    if secs or micros:
        text += f"{secs:02d}s" if not micros else f"{secs:02d}.{micros:06d}s"
    return text


@dataclass(frozen=True)
class Consumed:
    """A stretch of working time the budget used, in the calendar's zone."""

    start: datetime
    end: datetime

    @property
    def worked(self) -> timedelta:
        """Working time in the stretch, measured on the absolute time line."""
        # Aware datetimes sharing one ZoneInfo subtract as wall times; go through UTC.
        return self.end.astimezone(UTC) - self.start.astimezone(UTC)


@dataclass(frozen=True)
class Skipped:
    """A date inside the span that had no (or shorter) working time, and why."""

    day: date
    #: ``holiday``, ``closure``, ``short`` (shorter hours) or ``weekend``.
    kind: str
    reason: str

    def __str__(self) -> str:
        label = {
            "holiday": "holiday",
            "closure": "closed",
            "short": "shorter hours",
            "weekend": "no working hours",
        }.get(self.kind, self.kind)
        weekday = self.day.strftime("%a")
        return f"{weekday} {self.day.isoformat()}  {label}" + (
            f": {self.reason}" if self.reason else ""
        )


@dataclass(frozen=True)
class Explanation:
    """The answer of ``Calendar.explain``: due instant, windows consumed, days skipped."""

    calendar: str
    start: datetime
    budget: timedelta
    due: datetime
    windows: tuple[Consumed, ...]
    skipped: tuple[Skipped, ...]
    #: Windows consumed but not listed (the listing stops at ``MAX_LISTED``).
    unlisted: int = 0
    #: Versions of the calendar that took effect between start and due: (instant, why).
    changes: tuple[tuple[datetime, str], ...] = ()

    def lines(self) -> list[str]:
        """A human-readable rendering, one line per item."""
        out = [
            f"calendar {self.calendar}: {duration(self.budget)} of working time "
            f"from {self.start.isoformat()}",
            f"due {self.due.isoformat()}",
        ]
        if self.windows:
            out.append("windows consumed:")
            for part in self.windows:
                out.append(
                    f"  {part.start.isoformat()} -> {part.end.isoformat()}  {duration(part.worked)}"
                )
            if self.unlisted:
                out.append(f"  ... and {self.unlisted} more windows")
        if self.skipped:
            out.append("days skipped or shortened:")
            out.extend(f"  {item}" for item in self.skipped)
        if self.changes:
            out.append("calendar changed:")
            out.extend(f"  from {when.isoformat()}: {why}" for when, why in self.changes)
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())
