"""RFC 5545 (ICS) holiday and closure calendars, read into closures; and written back out.

Parsing is the ``icalendar`` package's and recurrence expansion is
``dateutil.rrule``'s; this module only maps events onto the calendar model:

* an all-day event (``DTSTART;VALUE=DATE``) closes each date from ``DTSTART``
  up to ``DTEND`` (exclusive; one day without ``DTEND``), like a holiday;
* a timed event closes just the hours it covers, date by date in the calendar's zone:
  a date it covers whole is closed, one it runs to the end of from its start is a half
  day (``closes_at``), and hours inside a date are taken out of that date's windows
  (``closed``: the hours around them stay worked);
* ``RRULE`` and ``EXDATE`` repeat an event; an unbounded rule is expanded up to
  the calendars' last year, and at most ``MAX_OCCURRENCES`` times.

Any problem is a ``CalendarFileError`` naming the ICS line; nothing is applied.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from taskflow.core.clocks.calendars import errors, model, timeline

#: Occurrences one ICS file may expand to (an unbounded daily rule would be endless).
MAX_OCCURRENCES = 20_000
#: The last local year calendars compute in (``calendar.MAX_YEAR``).
LAST_YEAR = 2299
_ONE_DAY = timedelta(days=1)


class _Locator:
    """Line numbers in the raw text, for messages: the n-th event and its properties."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.events = [
            i for i, line in enumerate(self.lines) if line.strip().upper() == "BEGIN:VEVENT"
        ]

    def line(self, event: int | None, prop: str | None = None) -> int | None:
        if event is None or event >= len(self.events):
            return None
        start = self.events[event]
        if prop is None:
            return start + 1
        for i in range(start, len(self.lines)):
            head = self.lines[i].split(":", 1)[0].split(";", 1)[0].strip().upper()
            if head == prop.upper():
                return i + 1
            if self.lines[i].strip().upper() == "END:VEVENT":
                break
        return start + 1


def closures(content: bytes | str, source: str, tz: ZoneInfo) -> tuple[model.Closure, ...]:
    """The closed dates and half days an ICS file describes, in calendar zone ``tz``."""
    import icalendar

    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    where = _Locator(text)

    def fail(event: int | None, prop: str | None, problem: str) -> errors.CalendarFileError:
        return errors.CalendarFileError(source, prop, problem, line=where.line(event, prop))

    try:
        parsed = icalendar.Calendar.from_ical(text)
    except ValueError as exc:
        raise fail(None, None, f"is not an RFC 5545 calendar: {exc}") from None
    out: list[model.Closure] = []
    for index, event in enumerate(parsed.walk("VEVENT")):
        for prop, problem in getattr(event, "errors", []):
            raise fail(
                index, prop, f"{problem}: write dates as YYYYMMDD, times as YYYYMMDDTHHMMSSZ"
            )
        if event.get("DTSTART") is None:
            raise fail(index, None, "event has no DTSTART: give each event its date")
        reason = str(event.get("SUMMARY") or "closure")
        for start, end in _occurrences(event, index, fail):
            out.extend(_closures_for(start, end, reason, tz, fail, index))
            if len(out) > MAX_OCCURRENCES:
                raise fail(
                    index,
                    "RRULE",
                    f"expands to more than {MAX_OCCURRENCES} closures: bound the rule "
                    "with COUNT or UNTIL",
                )
    return tuple(out)


def _occurrences(
    event: Any, index: int, fail: Any
) -> list[tuple[date | datetime, date | datetime]]:
    """Each (start, end) of one event, its recurrences expanded."""
    from dateutil import rrule

    start = event.decoded("DTSTART")
    end = event.decoded("DTEND") if event.get("DTEND") is not None else None
    if end is None:
        length = event.decoded("DURATION") if event.get("DURATION") is not None else None
        length = length or (_ONE_DAY if not isinstance(start, datetime) else timedelta(0))
    else:
        if type(end) is not type(start) or end <= start:
            raise fail(
                index, "DTEND", f"DTEND {end} must be later than DTSTART {start}, of the same kind"
            )
        length = end - start
    rule = event.get("RRULE")
    if rule is None:
        return [(start, start + length)]
    anchor = start if isinstance(start, datetime) else datetime.combine(start, time())
    try:
        expanded = rrule.rrulestr(
            "RRULE:" + rule.to_ical().decode(), dtstart=anchor, forceset=True, cache=False
        )
        for ex in (
            event.get("EXDATE", [])
            if isinstance(event.get("EXDATE"), list)
            else [event.get("EXDATE")]
        ):
            if ex is None:
                continue
            for value in ex.dts:
                day = value.dt
                expanded.exdate(day if isinstance(day, datetime) else datetime.combine(day, time()))
        horizon = datetime(LAST_YEAR, 12, 31, tzinfo=anchor.tzinfo)
        found: list[datetime] = []
        for occurrence in expanded.xafter(anchor, inc=True):
            if occurrence > horizon or len(found) > MAX_OCCURRENCES:
                break
            found.append(occurrence)
    except (ValueError, TypeError) as exc:
        raise fail(index, "RRULE", f"the recurrence rule cannot be expanded: {exc}") from None
    if len(found) > MAX_OCCURRENCES:
        raise fail(
            index,
            "RRULE",
            f"expands to more than {MAX_OCCURRENCES} dates: bound it with COUNT or UNTIL",
        )
    if isinstance(start, datetime):
        return [(o, o + length) for o in found]
    return [(o.date(), o.date() + length) for o in found]


def _closures_for(
    start: date | datetime, end: date | datetime, reason: str, tz: ZoneInfo, fail: Any, index: int
) -> list[model.Closure]:
    """The closures of one occurrence ``[start, end)``: whole dates, or a half day then dates."""
    if not isinstance(start, datetime):
        assert not isinstance(end, datetime)
        days = (end - start).days
        return [model.Closure(model.DateRule(on=start + i * _ONE_DAY), reason) for i in range(days)]
    assert isinstance(end, datetime)
    local_start = start.astimezone(tz) if start.tzinfo else start.replace(tzinfo=tz)
    local_end = end.astimezone(tz) if end.tzinfo else end.replace(tzinfo=tz)
    if local_end <= local_start:
        raise fail(
            index, "DTSTART", f"a timed event must end after it starts ({start}): give DTEND"
        )
    out = []
    day = local_start.date()
    while datetime.combine(day, time(), tz) < local_end:
        opens = _wall(local_start) if day == local_start.date() else 0
        closes = _wall(local_end) if day == local_end.date() else model.DAY
        if opens == 0 and closes == model.DAY:
            out.append(model.Closure(model.DateRule(on=day), reason))
        elif closes == model.DAY:  # to the end of the day: a half day, as before
            out.append(model.Closure(model.DateRule(on=day), reason, closes_at=opens))
        elif closes > opens:  # just those hours
            out.append(model.Closure(model.DateRule(on=day), reason, closed=(opens, closes)))
        day += _ONE_DAY
    return out


def _wall(at: datetime) -> int:
    """Wall-clock seconds after local midnight."""
    return at.hour * 3600 + at.minute * 60 + at.second


def export(calendar: Any, start: datetime, days: int = 366) -> bytes:
    """``days`` of ``calendar`` from ``start``'s local date as ICS: working windows as timed
    events, holidays and closures as all-day events (for people's own calendar apps)."""
    import icalendar

    first = start.astimezone(calendar.tz).date()
    out = icalendar.Calendar()
    out.add("prodid", "-//taskflow//calendar export//EN")
    out.add("version", "2.0")
    out.add("x-wr-calname", calendar.name)
    lo = datetime.combine(first, time(), calendar.tz)
    hi = datetime.combine(first + days * _ONE_DAY, time(), calendar.tz)
    starts, ends = calendar.intervals(lo.year - 1, hi.year + 1)
    a, b = (lo - timeline.EPOCH) // timeline.ONE_US, (hi - timeline.EPOCH) // timeline.ONE_US
    for opens, closes in zip(starts, ends, strict=True):
        if closes <= a or opens >= b:
            continue
        event = icalendar.Event()
        event.add("uid", f"{calendar.name}-work-{opens}@taskflow")
        event.add("summary", f"Working ({calendar.name})")
        event.add("dtstart", timeline.EPOCH + max(opens, a) * timeline.ONE_US)
        event.add("dtend", timeline.EPOCH + min(closes, b) * timeline.ONE_US)
        event.add("dtstamp", start)
        out.add_component(event)
    for i in range(days):
        day = first + i * _ONE_DAY
        plan = calendar.day_plan(day)
        if plan.kind in ("holiday", "closure"):
            event = icalendar.Event()
            event.add("uid", f"{calendar.name}-closed-{day.isoformat()}@taskflow")
            event.add("summary", f"Closed: {plan.reason or plan.kind}")
            event.add("dtstart", day)
            event.add("dtend", day + _ONE_DAY)
            event.add("dtstamp", start)
            event.add("transp", "TRANSPARENT")
            out.add_component(event)
    data: bytes = out.to_ical()
    return data
