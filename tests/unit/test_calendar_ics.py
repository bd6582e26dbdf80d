"""ICS (RFC 5545) closure calendars: reading into closures, refusals naming the line, export."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import icalendar
import pytest

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import ics
from taskflow.service.clocks import calendar_files

HEAD = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n"
TAIL = "END:VCALENDAR\n"


def event(uid: str, *lines: str) -> str:
    return "BEGIN:VEVENT\nUID:" + uid + "\n" + "".join(f"{x}\n" for x in lines) + "END:VEVENT\n"


CLOSURES = (
    HEAD
    + event("a", "DTSTART;VALUE=DATE:20270105", "DTEND;VALUE=DATE:20270107", "SUMMARY:Move")
    + event(
        "b",
        "DTSTART;VALUE=DATE:20270301",
        "RRULE:FREQ=YEARLY;COUNT=3",
        "EXDATE;VALUE=DATE:20280301",
        "SUMMARY:Founders day",
    )
    + event("c", "DTSTART:20270310T130000Z", "DTEND:20270311T000000Z", "SUMMARY:Half day")
    + TAIL
)
TABLE = {"name": "desk", "timezone": "UTC", "week": {"mon-fri": ["09:00-17:00"]}}


def desk(text: str) -> calendars.Calendar:
    return calendars.from_dict({**TABLE, "ics": [{"file": "x.ics", "content": text}]})


def test_events_close_dates_repeat_and_cut_a_half_day() -> None:
    calendar = desk(CLOSURES)
    closed = {
        d: calendar.day_plan(d).kind
        for d in (date(2027, 1, 5), date(2027, 1, 6), date(2027, 1, 7), date(2027, 3, 1))
    }
    assert closed == {
        date(2027, 1, 5): "closure",
        date(2027, 1, 6): "closure",
        date(2027, 1, 7): None,  # DTEND is exclusive
        date(2027, 3, 1): "closure",
    }
    assert calendar.day_plan(date(2028, 3, 1)).kind is None  # EXDATE
    assert calendar.day_plan(date(2029, 3, 1)).reason == "Founders day"
    assert calendar.day_plan(date(2030, 3, 1)).kind is None  # COUNT=3 with one excluded
    ten = datetime(2027, 3, 10, tzinfo=UTC)
    assert calendar.elapsed(ten, ten + timedelta(days=1)) == timedelta(hours=4)  # 09:00-13:00


def test_a_timed_event_closes_just_its_hours() -> None:
    # Tuesday 11:00-12:30 off, then Wednesday 15:00 to Friday 10:00 (a half day, a whole
    # day, and the first hour of Friday's 09:00-17:00).
    calendar = desk(
        HEAD
        + event("m", "DTSTART:20270105T110000Z", "DTEND:20270105T123000Z", "SUMMARY:Drill")
        + event("n", "DTSTART:20270106T150000Z", "DTEND:20270108T100000Z", "SUMMARY:Offsite")
        + TAIL
    )
    day = timedelta(days=1)
    tuesday = datetime(2027, 1, 5, tzinfo=UTC)
    assert calendar.elapsed(tuesday, tuesday + day) == timedelta(hours=6, minutes=30)
    assert calendar.is_open(tuesday + timedelta(hours=10, minutes=59))
    assert not calendar.is_open(tuesday + timedelta(hours=11))
    assert calendar.next_open(tuesday + timedelta(hours=11)) == tuesday + timedelta(hours=12.5)
    assert calendar.elapsed(tuesday + day, tuesday + 2 * day) == timedelta(hours=6)
    assert calendar.day_plan(date(2027, 1, 7)).kind == "closure"
    assert calendar.elapsed(tuesday + 3 * day, tuesday + 4 * day) == timedelta(hours=7)
    plan = calendar.day_plan(date(2027, 1, 5))
    assert (plan.kind, plan.reason, [str(w) for w in plan.windows]) == (
        "short",
        "Drill",
        ["09:00-11:00", "12:30-17:00"],
    )


def test_timed_hours_in_the_calendars_zone_and_repeated() -> None:
    # 14:00-15:00 New York time each Monday for three weeks, on a London calendar: 19:00
    # London is after hours, so it takes nothing; a weekly 10:00-11:00 London drill does.
    table = {**TABLE, "timezone": "Europe/London"}
    text = (
        HEAD
        + event(
            "ny",
            "DTSTART;TZID=America/New_York:20270104T140000",
            "DTEND;TZID=America/New_York:20270104T150000",
        )
        + event(
            "uk",
            "DTSTART;TZID=Europe/London:20270104T100000",
            "DTEND;TZID=Europe/London:20270104T110000",
            "RRULE:FREQ=WEEKLY;COUNT=3",
        )
        + TAIL
    )
    calendar = calendars.from_dict({**table, "ics": [{"file": "x.ics", "content": text}]})
    for week in range(4):
        monday = datetime(2027, 1, 4, tzinfo=UTC) + timedelta(weeks=week)
        hours = calendar.elapsed(monday, monday + timedelta(days=1))
        assert hours == timedelta(hours=8 if week == 3 else 7), week


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        (event("x", "DTSTART;VALUE=DATE:20271345"), 6, "Wrong date format"),
        (event("x", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=SOMETIMES"), 7, "RRULE"),
        (event("x", "DTSTART;VALUE=DATE:20270101", "RRULE:FREQ=DAILY"), 7, "COUNT or UNTIL"),
        (
            event("x", "DTSTART;VALUE=DATE:20270101", "DTEND;VALUE=DATE:20261231"),
            7,
            "must be later than DTSTART",
        ),
        (event("x", "DTSTART:20270101T100000Z"), 6, "must end after it starts"),
        (event("x", "SUMMARY:no date"), 4, "no DTSTART"),
    ],
)
def test_bad_events_are_refused_naming_the_line(body: str, line: int, words: str) -> None:
    good = event("ok", "DTSTART;VALUE=DATE:20270105")
    text = HEAD + body + good + TAIL
    with pytest.raises(calendars.CalendarFileError) as refused:
        desk(text)
    assert refused.value.line == line, refused.value.message
    assert words in refused.value.message


def test_a_calendar_file_names_its_ics_file(tmp_path: Path) -> None:
    (tmp_path / "closed.ics").write_text(CLOSURES)
    (tmp_path / "desk.toml").write_text(
        'name = "desk"\ntimezone = "UTC"\n[week]\nmon-fri = ["09:00-17:00"]\n'
        '[[ics]]\nfile = "closed.ics"\n'
    )
    calendar = calendar_files.load_folder(tmp_path).get("desk")
    assert calendar.day_plan(date(2027, 1, 5)).reason == "Move"
    (tmp_path / "closed.ics").unlink()
    with pytest.raises(calendars.CalendarFileError) as refused:
        calendar_files.load_folder(tmp_path)
    assert refused.value.key == "ics[0].file"
    assert refused.value.line == 6


def test_export_lists_working_windows_and_closed_dates() -> None:
    calendar = desk(CLOSURES)
    start = datetime(2027, 1, 1, tzinfo=UTC)
    parsed = icalendar.Calendar.from_ical(ics.export(calendar, start, 366))
    work = timedelta(0)
    closed = set()
    for item in parsed.walk("VEVENT"):
        begin, end = item.decoded("DTSTART"), item.decoded("DTEND")
        if isinstance(begin, datetime):
            work += end - begin
        else:
            closed.add(begin)
    assert work == calendar.elapsed(start, start + timedelta(days=366))
    assert {date(2027, 1, 5), date(2027, 1, 6), date(2027, 3, 1)} <= closed
    assert date(2027, 3, 10) not in closed  # a half day is a shorter working window
