"""GraphQL types of a principal's working hours and leave (``Principal.workingHours``,
``Principal.leave``)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from taskflow.core.access import working_hours as wh


@strawberry.type(name="WorkingHours", description="When a principal works (quiet hours outside).")
class WorkingHoursType:
    time_zone: str = strawberry.field(description="IANA time zone the windows are read in.")
    windows: JSON | None = strawberry.field(
        description='Weekly windows by day, e.g. {"mon": [["09:00", "17:00"]]}; null when a '
        "calendar is named instead."
    )
    calendar: str | None = strawberry.field(
        description="The business calendar naming the working hours, when used instead."
    )

    @classmethod
    def of(cls, hours: wh.WorkingHours | None) -> WorkingHoursType | None:
        if hours is None:
            return None
        data = hours.as_dict()
        return cls(
            time_zone=hours.time_zone,
            windows=cast(JSON, data.get("windows")),
            calendar=hours.calendar,
        )


@strawberry.type(name="Leave", description="One absence of a principal, from (inclusive) to.")
class LeaveType:
    start: datetime = strawberry.field(name="from", description="When it starts.")
    end: datetime = strawberry.field(name="to", description="When it ends (exclusive).")
    note: str | None = strawberry.field(description="Why, in words, when given.")

    @classmethod
    def of(cls, leave: wh.Leave) -> LeaveType:
        return cls(start=leave.start, end=leave.end, note=leave.note)
