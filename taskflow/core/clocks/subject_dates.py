"""Reading a date or an instant from a subject attribute (``subject.due_date``), shared by
every rule that takes its instant from the subject (run deadlines, slot expiry).

A value is an ISO 8601 date-time (with an offset, else read in the rule's time zone, else
UTC) or a date. What a bare date means is the rule's choice: the end of that day in the
zone (the next local midnight), or the end of that business day on a calendar (its last
working window's close that day, else on the latest working day before it). Anything else
is :class:`BadSubjectDate`, naming the attribute, so a start or an update is refused
before anything is written.
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from taskflow import errors
from taskflow.core.clocks import calendars
from taskflow.core.definition.conditions import expr as ex

#: How far back "the end of that business day" looks for a working day (a year of closures).
_LOOKBACK_DAYS = 366


class BadSubjectDate(errors.ValidationError):
    """The subject attribute a rule reads holds no date or instant (nothing was changed)."""


def parse(value: Any, attribute: str, *, absent: str) -> date | datetime | None:
    """The date (``2026-12-31``) or date-time a subject value holds; None when absent.

    A date-time without an offset comes back naive (the caller reads it in its zone).
    ``absent`` says what leaving the attribute out means, for the refusal's message.
    """
    if value is ex.MISSING or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                return date.fromisoformat(text)
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            pass
    raise BadSubjectDate(
        f"subject.{attribute} is {value!r}, which is not a date: send an ISO 8601 date "
        f"('2026-12-31') or date-time ('2026-12-31T17:00:00+01:00'), or leave it out ({absent}).",
        field=f"subject.{attribute}",
    )


def parse_instant(
    value: Any,
    zone: str | None,
    attribute: str,
    *,
    calendar: calendars.BusinessClock | None = None,
    absent: str = "the rule then does not apply",
) -> datetime | None:
    """The instant (UTC) a subject value names: a date-time (in ``zone``, else UTC, when it
    has no offset), or a date: the end of that business day on ``calendar`` when one is
    given, else the end of that day in ``zone``. None when absent; else
    :class:`BadSubjectDate`."""
    found = parse(value, attribute, absent=absent)
    if found is None:
        return None
    tz = zoneinfo.ZoneInfo(zone) if zone else UTC
    if isinstance(found, datetime):
        moment = found if found.tzinfo is not None else found.replace(tzinfo=tz)
        return moment.astimezone(UTC)
    if calendar is not None:
        return end_of_business_day(calendar, found)
    return datetime.combine(found + timedelta(days=1), time(0), tz).astimezone(UTC)


def end_of_business_day(cal: calendars.BusinessClock, day: date) -> datetime:
    """The close of ``cal``'s last working window on ``day`` (its own zone); a day without
    working time (a weekend, a holiday) means the close of the latest working day before it.
    Real time (no windows) ends the day at the next midnight UTC."""
    plan_of = getattr(cal, "day_plan", None)
    tz = getattr(cal, "tz", UTC)
    if plan_of is None:
        return datetime.combine(day + timedelta(days=1), time(0), UTC)
    for back in range(_LOOKBACK_DAYS):
        on = day - timedelta(days=back)
        plan = plan_of(on)
        if plan.windows and not plan.blackout:
            close = max(w.close for w in plan.windows)
            local = datetime.combine(on, time(0)) + timedelta(seconds=close)
            return local.replace(tzinfo=tz).astimezone(UTC)
    return datetime.combine(day + timedelta(days=1), time(0), tz).astimezone(UTC)
