"""The ``calendars`` query: the loaded business-hours calendars and their effective-dated versions.

Any signed-in caller reads them: calendars hold working hours and holidays, no
subject data. Each version says from which instant it is in force
(``Calendar.versions`` in the core), so a screen can show what counted when.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import model
from taskflow.core.clocks.calendars import versions as calendar_versions

_WINDOWS = 'Local working windows, e.g. "09:00-17:30" (empty: closed).'


@strawberry.type(description="One weekday of a calendar version and its working windows.")
class CalendarDay:
    weekday: str = strawberry.field(description="mon, tue, ..., sun.")
    windows: list[str] = strawberry.field(description=_WINDOWS)


@strawberry.type(description="One definition of a calendar and the instant it takes effect.")
class CalendarVersion:
    effective: datetime | None = strawberry.field(
        description="When it takes effect; null for the first version (in force since always)."
    )
    key: str = strawberry.field(
        description='Where it is written in the file: "" (top level) or versions[i].'
    )
    description: str = strawberry.field(description="Why it changed, as the file says.")
    week: list[CalendarDay] = strawberry.field(description="The weekly windows, Monday first.")
    holidays: str | None = strawberry.field(
        description="Public holidays observed: country[/subdivision]; null for none."
    )
    holiday_mode: str = strawberry.field(description="remove-date or cancel-shift.")
    closures: int = strawberry.field(
        description="Closure rules (closed dates, half days, ICS events), the earlier ones kept."
    )
    working_days: int = strawberry.field(description="Extra worked-date rules.")


@strawberry.type(description="A business-hours calendar SLA clocks count on.")
class Calendar:
    name: str = strawberry.field(description="Its name, as milestones name it.")
    timezone: str = strawberry.field(description="The IANA zone its windows are read in.")
    description: str = strawberry.field(description="What the file says it is.")
    versions: list[CalendarVersion] = strawberry.field(
        description="Its definitions in order of the instant each takes effect."
    )


def _version(version: calendar_versions.Version) -> CalendarVersion:
    spec = version.spec
    source = spec.holidays
    return CalendarVersion(
        effective=version.effective,
        key=version.key,
        description=version.description,
        week=[
            CalendarDay(weekday=model.WEEKDAYS[day], windows=[str(w) for w in windows])
            for day, windows in enumerate(spec.week)
        ],
        holidays=None
        if source is None
        else "/".join(filter(None, (source.country, source.subdivision))),
        holiday_mode=spec.holiday_mode,
        closures=len(spec.closures),
        working_days=len(spec.working_days),
    )


def calendar_of(calendar: calendars.Calendar) -> Calendar:
    """The GraphQL reading of one loaded calendar."""
    return Calendar(
        name=calendar.name,
        timezone=calendar.spec.timezone,
        description=calendar.spec.description,
        versions=[_version(v) for v in calendar.versions],
    )


@strawberry.type
class CalendarQueries:
    @strawberry.field(
        description="The loaded business-hours calendars with their versions (any signed-in "
        "caller: calendars hold no subject data), by name."
    )
    async def calendars(
        self,
        info: Info,
        name: Annotated[
            str | None, strawberry.argument(description="Only the calendar of this name.")
        ] = None,
    ) -> list[Calendar]:
        await caller(info)
        return [
            calendar_of(c)
            for c in info.context.services.calendars
            if name is None or c.name == name
        ]
