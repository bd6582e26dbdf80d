"""A principal's working hours and leave: when they work, and when a reminder may reach them.

Working hours are weekly windows in the principal's time zone (``{"mon": [["09:00",
"17:00"]], ...}``), or a named business calendar; leave is a list of half-open
``[from, to)`` intervals. Both are pure data here; the store keeps them as JSON.
"""

from __future__ import annotations

import itertools
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from taskflow import errors
from taskflow.core.common import refusals

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
#: How far ``next_working_instant`` looks ahead before it gives up (leave included).
HORIZON = timedelta(days=400)
#: The most leave entries one principal keeps (older ones can be removed).
MAX_LEAVE = 200


class OnLeave(refusals.Refusal, code=refusals.RefusalCode.ON_LEAVE):
    """The principal is on leave now; assign to someone else, wait, or force the assignment."""

    # Declared with the leave it names (core/common/refusals.py holds the others).
    principal = refusals.Fact(str)
    leave_from = refusals.Fact(refusals.moment)
    leave_to = refusals.Fact(refusals.moment)

    @classmethod
    def explain(cls, facts: dict[str, Any]) -> str:
        """Who is away until when, and the ways on."""
        return (
            f"{facts['principal']!r} is on leave from {facts['leave_from']} to "
            f"{facts['leave_to']}; assign to someone else, or pass force: true to hand it "
            "over anyway."
        )


@dataclass(frozen=True)
class Leave:
    """One absence, ``[start, end)``."""

    start: datetime
    end: datetime
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape the database and the API use."""
        return {"from": self.start.isoformat(), "to": self.end.isoformat(), "note": self.note}


@dataclass(frozen=True)
class WorkingHours:
    """Weekly windows in ``time_zone`` (``windows[0]`` is Monday), or a named ``calendar``."""

    time_zone: str
    windows: tuple[tuple[tuple[time, time], ...], ...] = ((),) * 7
    calendar: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape the database and the API use."""
        out: dict[str, Any] = {"time_zone": self.time_zone}
        if self.calendar is not None:
            out["calendar"] = self.calendar
        else:
            out["windows"] = {
                day: [[a.strftime("%H:%M"), b.strftime("%H:%M")] for a, b in spans]
                for day, spans in zip(DAYS, self.windows, strict=True)
                if spans
            }
        return out

    def working_at(self, at: datetime) -> bool:
        """Whether ``at`` falls in a weekly window (a named calendar answers elsewhere)."""
        local = at.astimezone(zoneinfo.ZoneInfo(self.time_zone))
        clock = local.time().replace(tzinfo=None)
        return any(a <= clock < b for a, b in self.windows[local.weekday()])


def _clock(text: Any, where: str) -> time:
    try:
        hours, minutes = str(text).split(":")
        if hours == "24" and minutes == "00":
            return time.max
        return time(int(hours), int(minutes))
    except ValueError:
        raise errors.ValidationError(
            f"{where}: {text!r} is not a time of day; write HH:MM, e.g. 09:00.",
            field="windows",
        ) from None


def build_hours(
    time_zone: str, windows: Mapping[str, Any] | None, calendar: str | None
) -> WorkingHours:
    """Check working hours (weekly windows or a calendar name) and build them."""
    try:
        zoneinfo.ZoneInfo(time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise errors.ValidationError(
            f"time zone {time_zone!r} is unknown; use an IANA name such as Europe/London.",
            field="timeZone",
        ) from None
    if (windows is None) == (calendar is None):
        raise errors.ValidationError(
            "give either weekly windows or a calendar name, not both and not neither.",
            field="windows",
        )
    if calendar is not None:
        return WorkingHours(time_zone=time_zone, calendar=calendar)
    assert windows is not None
    unknown = sorted(set(windows) - set(DAYS))
    if unknown:
        raise errors.ValidationError(
            f"windows name unknown days {unknown}; use {', '.join(DAYS)}.", field="windows"
        )
    days: list[tuple[tuple[time, time], ...]] = []
    for day in DAYS:
        spans = []
        for span in windows.get(day) or []:
            if not isinstance(span, Sequence) or isinstance(span, str) or len(span) != 2:
                raise errors.ValidationError(
                    f'windows.{day}: each window is [start, end], e.g. ["09:00", "17:00"].',
                    field="windows",
                )
            start, end = _clock(span[0], f"windows.{day}"), _clock(span[1], f"windows.{day}")
            if not start < end:
                raise errors.ValidationError(
                    f"windows.{day}: {span[0]}-{span[1]} ends before it starts.",
                    field="windows",
                )
            spans.append((start, end))
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            if start < end:
                raise errors.ValidationError(
                    f"windows.{day}: windows overlap; merge them.", field="windows"
                )
        days.append(tuple(spans))
    if not any(days):
        raise errors.ValidationError(
            "windows are empty: nobody would ever be reachable; give at least one window.",
            field="windows",
        )
    return WorkingHours(time_zone=time_zone, windows=tuple(days))


def hours_from_json(data: Mapping[str, Any] | None) -> WorkingHours | None:
    """Stored working hours (``as_dict``'s shape) back as data; None when unset."""
    if not data:
        return None
    return build_hours(str(data["time_zone"]), data.get("windows"), data.get("calendar"))


def build_leave(start: datetime, end: datetime, note: str | None) -> Leave:
    """Check one leave interval and build it."""
    if start.tzinfo is None or end.tzinfo is None:
        raise errors.ValidationError(
            "leave instants need a time zone offset, e.g. 2026-12-24T00:00:00Z.", field="from"
        )
    if not start < end:
        raise errors.ValidationError("leave must end after it starts.", field="to")
    if note is not None and len(note) > 200:
        raise errors.ValidationError("a leave note is at most 200 characters.", field="note")
    return Leave(start=start, end=end, note=note)


def leave_from_json(data: Sequence[Mapping[str, Any]] | None) -> tuple[Leave, ...]:
    """Stored leave back as data, by start."""
    found = (
        Leave(
            datetime.fromisoformat(entry["from"]),
            datetime.fromisoformat(entry["to"]),
            entry.get("note"),
        )
        for entry in data or ()
    )
    return tuple(sorted(found, key=lambda leave: (leave.start, leave.end)))


def on_leave(leave: Sequence[Leave], at: datetime) -> Leave | None:
    """The leave ``at`` falls in, if any."""
    return next((entry for entry in leave if entry.start <= at < entry.end), None)


def require_present(principal_id: str, leave: Sequence[Leave], at: datetime, force: bool) -> None:
    """Refuse (``OnLeave``) handing work to ``principal_id`` while on leave ``at``, unless
    ``force`` (``assign``, ``reassignHeld``; escalations skip instead: ``core/clocks/firing``)."""
    absent = on_leave(leave, at)
    if absent is not None and not force:
        raise OnLeave(
            principal=principal_id,
            leave_from=absent.start.isoformat(),
            leave_to=absent.end.isoformat(),
        )


def next_working_instant(
    hours: WorkingHours | None,
    leave: Sequence[Leave],
    at: datetime,
    opens: Callable[[datetime], datetime] | None = None,
) -> datetime:
    """The first instant from ``at`` on when the principal works and is not on leave.

    Weekly windows decide when they work; without them (unset, or a named calendar)
    ``opens`` does (the next instant their calendar is open, at or after its argument),
    and without either only leave counts. Beyond ``HORIZON`` (leave without end in sight)
    ``at`` itself: a reminder is late rather than lost.
    """
    moment = at
    limit = at + HORIZON
    while moment < limit:
        absent = on_leave(leave, moment)
        if absent is not None:
            moment = absent.end
            continue
        if hours is not None and hours.calendar is None:
            if hours.working_at(moment):
                return moment
            moment = _next_window_start(hours, moment)
            continue
        opened = opens(moment) if opens is not None else moment
        if opened == moment:
            return moment
        moment = opened
    return at


def _next_window_start(hours: WorkingHours, at: datetime) -> datetime:
    zone = zoneinfo.ZoneInfo(hours.time_zone)
    local = at.astimezone(zone)
    for offset in range(8):
        day = (local + timedelta(days=offset)).date()
        for start, _ in hours.windows[day.weekday()]:
            candidate = datetime.combine(day, start, tzinfo=zone)
            if candidate > at:
                return candidate
    return at + timedelta(days=7)  # unreachable with at least one window
