"""Errors raised by business-hours calendars, all children of ``TaskflowError``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from taskflow import errors


class CalendarError(errors.TaskflowError):
    """Root of calendar errors."""

    code = "CALENDAR_ERROR"


class CalendarFileError(CalendarError):
    """A calendar file is missing, unreadable or invalid; names the file, the key and the fix."""

    code = "CALENDAR_FILE_INVALID"

    def __init__(
        self, file: str, key: str | None, problem: str, *, line: int | None = None, **facts: Any
    ) -> None:
        where = file if line is None else f"{file}:{line}"
        where = where if key is None else f"{where}, key {key!r}"
        super().__init__(f"{where}: {problem}", file=file, key=key, line=line, **facts)
        self.file = file
        self.key = key
        self.line = line
        self.problem = problem


class NaiveDatetime(CalendarError, errors.ValidationError):
    """A datetime without a time zone was given; calendars only take aware datetimes."""

    code = "NAIVE_DATETIME"

    def __init__(self, what: str, value: object) -> None:
        super().__init__(
            f"{what} {value!r} has no time zone: pass an aware datetime, e.g. "
            "datetime(2026, 12, 24, 16, 0, tzinfo=ZoneInfo('Europe/London')) "
            "or an ISO string with an offset such as 2026-12-24T16:00+00:00.",
            what=what,
        )


class NoWorkingTime(CalendarError):
    """The calendar has no working time at all (or none within the search bound)."""

    code = "CALENDAR_NO_WORKING_TIME"


class NeverCloses(CalendarError):
    """The calendar stays open for the whole search bound, so there is no next close."""

    code = "CALENDAR_NEVER_CLOSES"


class BudgetOutOfRange(CalendarError, errors.ValidationError):
    """A budget is negative, or a computation would run past the supported range."""

    code = "CALENDAR_OUT_OF_RANGE"


class UnknownCalendar(CalendarError, errors.NotFound):
    """No calendar of that name is loaded; the message lists the known names."""

    code = "UNKNOWN_CALENDAR"

    def __init__(self, name: str, known: Iterable[str]) -> None:
        names = sorted(known)
        listing = ", ".join(names) if names else "(none: is the calendars folder empty?)"
        super().__init__(
            f"unknown calendar {name!r}: known calendars are {listing}. "
            "Use one of these names, or add a file calendars/<name>.toml.",
            name=name,
            known=names,
        )
        self.name = name
