"""Fixed cases for business-hours calendars: conventions, DST nights, holidays, errors."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from taskflow import errors as taskflow_errors
from taskflow.core.clocks import calendars
from taskflow.service.clocks import calendar_files
from tests.unit.calendars.helpers import SHIPPED, shipped

LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")
H = timedelta(hours=1)


def cal(name: str) -> calendars.Calendar:
    return shipped().get(name)


def london(*args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=LONDON, fold=fold)  # type: ignore[misc]


# --- registry and files ------------------------------------------------------


def test_shipped_calendars_load_by_name() -> None:
    registry = shipped()
    assert registry.names() >= {
        "24x7",
        "uk-london",
        "us-new-york",
        "de-berlin",
        "in-bengaluru",
        "support-overnight",
    }
    assert "uk-london" in registry
    assert {c.name for c in registry} == registry.names()
    assert cal("de-berlin").tz == ZoneInfo("Europe/Berlin")


def test_unknown_calendar_lists_known_names() -> None:
    with pytest.raises(calendars.UnknownCalendar) as caught:
        shipped().get("mars-base")
    assert isinstance(caught.value, taskflow_errors.TaskflowError)
    assert caught.value.code == "UNKNOWN_CALENDAR"
    assert "uk-london" in caught.value.message


def test_load_single_file_and_inherits_from_same_folder(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(
        'name = "base"\ntimezone = "Europe/London"\n[week]\nmon-fri = ["09:00-17:00"]\n'
    )
    (tmp_path / "child.toml").write_text(
        'name = "child"\ninherits = "base"\n[week]\nsat = ["10:00-12:00"]\n'
        "[[closures]]\ndate = 2026-06-01\nreason = 'move'\n"
    )
    child = calendar_files.load(tmp_path / "child.toml")
    assert child.name == "child"
    assert child.tz == LONDON
    assert child.add(london(2026, 6, 6, 9), H) == london(2026, 6, 6, 11)  # Saturday added
    # 1h on Friday, 2h on Saturday, Monday 1 June closed.
    assert child.add(london(2026, 5, 29, 16), 4 * H) == london(2026, 6, 2, 10)
    assert calendar_files.load_folder(tmp_path).names() == {"base", "child"}


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        ('name = "x"\n[week]\nmon = ["09:00-17:00"]\n', "timezone", "IANA"),
        ('name = "x"\ntimezone = "Mars/Base"\n[week]\nmon = ["09:00-17:00"]\n', "timezone", "IANA"),
        ('name = "x"\ntimezone = "UTC"\n[week]\nmon = ["9-17"]\n', "week.mon", "HH:MM"),
        ('name = "x"\ntimezone = "UTC"\n[week]\nfunday = ["09:00-17:00"]\n', "week.funday", "mon"),
        (
            'name = "x"\ntimezone = "UTC"\nweekk = 1\n[week]\nmon = ["09:00-17:00"]\n',
            "weekk",
            "allowed",
        ),
        (
            'name = "x"\ntimezone = "UTC"\n[week]\nmon = ["09:00-09:00"]\n',
            "week.mon",
            "00:00-24:00",
        ),
        (
            'name = "x"\ntimezone = "UTC"\n[week]\nmon = ["09:00-12:00", "11:00-13:00"]\n',
            "week.mon",
            "overlap",
        ),
        ('name = "x"\ntimezone = "UTC"\ninherits = "nope"\n', "inherits", "no calendar named"),
        (
            'name = "x"\ntimezone = "UTC"\nholiday_mode = "skip"\n[week]\nmon = ["09:00-17:00"]\n',
            "holiday_mode",
            "cancel-shift",
        ),
        (
            'name = "x"\ntimezone = "UTC"\n[week]\nmon = ["09:00-17:00"]\n'
            '[holidays]\ncountry = "XX"\n',
            "holidays",
            "ISO",
        ),
        (
            'name = "x"\ntimezone = "UTC"\n[week]\nmon = ["09:00-17:00"]\n'
            '[[closures]]\ndate = "2026-12-24"\n',
            "closures[0].date",
            "without quotes",
        ),
    ],
)
def test_bad_files_name_file_key_and_fix(tmp_path: Path, text: str, key: str, hint: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(text)
    with pytest.raises(calendars.CalendarFileError) as caught:
        calendar_files.load(path)
    error = caught.value
    assert error.key == key
    assert str(path) in error.message
    assert hint in error.message
    assert error.code == "CALENDAR_FILE_INVALID"


def test_no_working_time_fails_at_load() -> None:
    with pytest.raises(calendars.NoWorkingTime):
        calendars.from_dict({"name": "never", "timezone": "UTC", "week": {}})


def test_inheritance_cycle_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('name = "a"\ninherits = "b"\n')
    (tmp_path / "b.toml").write_text('name = "b"\ninherits = "a"\n')
    with pytest.raises(calendars.CalendarFileError, match="cycle"):
        calendar_files.load_folder(tmp_path)


# --- conventions ---------------------------------------------------------------


def test_budget_ending_at_close_is_due_at_close() -> None:
    uk = cal("uk-london")
    assert uk.add(london(2026, 6, 5, 9), timedelta(hours=8, minutes=30)) == london(
        2026, 6, 5, 17, 30
    )
    assert uk.add(london(2026, 6, 5, 9), timedelta(hours=8, minutes=30, microseconds=1)) == (
        london(2026, 6, 8, 9, 0, 0, 1)
    )


def test_add_zero_is_start_even_when_closed() -> None:
    uk = cal("uk-london")
    start = london(2026, 6, 6, 3, 17)  # Saturday night
    assert uk.add(start, timedelta(0)) == start
    assert uk.add(start, timedelta(0)).tzinfo == LONDON


def test_start_outside_hours_accrues_from_next_opening() -> None:
    uk = cal("uk-london")
    assert uk.add(london(2026, 6, 6, 3), H) == london(2026, 6, 8, 10)
    assert uk.add(london(2026, 6, 5, 17, 30), H) == london(
        2026, 6, 8, 10
    )  # half-open: 17:30 closed
    assert uk.is_open(london(2026, 6, 5, 9))
    assert not uk.is_open(london(2026, 6, 5, 17, 30))


def test_microseconds_kept_and_result_in_calendar_zone() -> None:
    uk = cal("uk-london")
    start = datetime(2026, 6, 5, 8, 0, 0, 123456, tzinfo=UTC)  # 09:00:00.123456 BST
    due = uk.add(start, timedelta(seconds=1, microseconds=1))
    assert due == london(2026, 6, 5, 9, 0, 1, 123457)
    assert due.tzinfo == LONDON
    assert uk.elapsed(start, due) == timedelta(seconds=1, microseconds=1)


def test_issue_example_christmas_eve_london() -> None:
    due = cal("uk-london").add(datetime.fromisoformat("2026-12-24T16:00+00:00"), 8 * H)
    # 1h30 on the 24th; 25, 26 (Sat), 27 (Sun), 28 (Boxing Day observed) closed.
    assert due == london(2026, 12, 29, 15, 30)


def test_elapsed_is_zero_when_end_not_after_start() -> None:
    uk = cal("uk-london")
    assert uk.elapsed(london(2026, 6, 5, 12), london(2026, 6, 5, 11)) == timedelta(0)
    assert uk.elapsed(london(2026, 6, 5, 12), london(2026, 6, 5, 12)) == timedelta(0)


def test_next_open_and_next_close() -> None:
    uk = cal("uk-london")
    assert uk.next_open(london(2026, 6, 5, 10)) == london(2026, 6, 5, 10)
    assert uk.next_open(london(2026, 6, 5, 18)) == london(2026, 6, 8, 9)
    assert uk.next_close(london(2026, 6, 5, 10)) == london(2026, 6, 5, 17, 30)
    assert uk.next_close(london(2026, 6, 6, 10)) == london(2026, 6, 8, 17, 30)
    with pytest.raises(calendars.NeverCloses):
        cal("24x7").next_close(datetime(2026, 1, 1, tzinfo=UTC))


# --- DST -----------------------------------------------------------------------


def test_window_on_spring_forward_night_is_one_hour_and_fall_back_three() -> None:
    night = calendars.from_dict(
        {"name": "n", "timezone": "Europe/London", "week": {"mon-sun": ["01:00-03:00"]}}
    )
    # 29 March and 25 October 2026 are the Sundays of change in London.
    assert night.elapsed(london(2026, 3, 29, 0), london(2026, 3, 29, 4)) == H
    assert night.elapsed(london(2026, 10, 25, 0), london(2026, 10, 25, 4)) == 3 * H
    assert night.elapsed(london(2026, 3, 28, 0), london(2026, 3, 28, 4)) == 2 * H
    # 01:30 repeats on the fall-back night: it names the earlier instant (BST).
    assert night.add(london(2026, 10, 25, 0), timedelta(minutes=30)) == london(2026, 10, 25, 1, 30)
    assert night.add(london(2026, 10, 25, 0), timedelta(minutes=90)).utcoffset() == timedelta(0)


def test_overnight_shift_on_dst_nights_is_seven_and_nine_hours() -> None:
    night = cal("support-overnight")
    assert night.elapsed(london(2026, 3, 28, 21), london(2026, 3, 29, 7)) == 7 * H
    assert night.elapsed(london(2026, 10, 24, 21), london(2026, 10, 25, 7)) == 9 * H
    assert night.add(london(2026, 3, 28, 22), 7 * H) == london(2026, 3, 29, 6)
    assert night.add(london(2026, 10, 24, 22), 9 * H) == london(2026, 10, 25, 6)


def test_skipped_wall_time_moves_forward() -> None:
    # Santiago skips 00:00-01:00 on its spring-forward night (2026-09-06).
    zone = ZoneInfo("America/Santiago")
    midnight = calendars.from_dict(
        {"name": "s", "timezone": "America/Santiago", "week": {"mon-sun": ["00:00-02:00"]}}
    )
    opens = midnight.next_open(datetime(2026, 9, 5, 23, tzinfo=zone))
    assert opens == datetime(2026, 9, 6, 1, 0, tzinfo=zone)
    assert (
        midnight.elapsed(
            datetime(2026, 9, 5, 23, tzinfo=zone), datetime(2026, 9, 6, 3, tzinfo=zone)
        )
        == H
    )


# --- holidays, half days, leap day ---------------------------------------------------


def test_leap_day_2028_is_a_working_day() -> None:
    uk = cal("uk-london")
    assert uk.add(london(2028, 2, 28, 17), H) == london(2028, 2, 29, 9, 30)
    leap = calendars.from_dict(
        {
            "name": "leap",
            "timezone": "UTC",
            "week": {"mon-fri": ["09:00-17:00"]},
            "closures": [{"month": 2, "day": 29, "reason": "leap day off"}],
        }
    )
    assert leap.add(datetime(2028, 2, 28, 16, tzinfo=UTC), 2 * H) == datetime(
        2028, 3, 1, 10, tzinfo=UTC
    )
    assert leap.add(datetime(2027, 2, 26, 16, tzinfo=UTC), 2 * H) == datetime(
        2027, 3, 1, 10, tzinfo=UTC
    )


def test_new_york_christmas_eve_and_thanksgiving_half_days() -> None:
    ny = cal("us-new-york")
    at = lambda *a: datetime(*a, tzinfo=NEW_YORK)  # noqa: E731
    # Thu 24 Dec 2026 closes at 13:00; 25th is Christmas; then the weekend.
    assert ny.add(at(2026, 12, 24, 12), 2 * H) == at(2026, 12, 28, 10)
    assert ny.add(at(2026, 12, 24, 12), H) == at(2026, 12, 24, 13)
    # Day after Thanksgiving 2026 is Fri 27 November.
    assert ny.elapsed(at(2026, 11, 27, 0), at(2026, 11, 28, 0)) == 4 * H
    # 3 July 2026 is the observed Independence Day: the holiday wins over the half day.
    assert ny.elapsed(at(2026, 7, 3, 0), at(2026, 7, 4, 0)) == timedelta(0)
    assert ny.elapsed(at(2025, 7, 3, 0), at(2025, 7, 4, 0)) == 4 * H


def test_overnight_shift_over_a_holiday_removes_the_whole_date() -> None:
    night = cal("support-overnight")
    # 25 Dec (Fri) and 26 Dec (Sat, Boxing Day) 2026 are holidays in England:
    # the 24th's shift stops at midnight; nothing until 27 Dec 00:00.
    assert night.add(london(2026, 12, 24, 22), 2 * H) == london(2026, 12, 25, 0)
    assert night.add(london(2026, 12, 24, 22), 3 * H) == london(2026, 12, 27, 1)
    assert not night.is_open(london(2026, 12, 25, 3))


def test_cancel_shift_mode_keeps_previous_nights_shift() -> None:
    night = calendars.from_dict(
        {
            "name": "cancel",
            "timezone": "Europe/London",
            "holiday_mode": "cancel-shift",
            "week": {"mon-sun": ["22:00-06:00"]},
            "holidays": {"country": "GB", "subdivision": "ENG"},
        }
    )
    assert night.add(london(2026, 12, 24, 22), 8 * H) == london(2026, 12, 25, 6)
    # The shifts starting on 25 and 26 December are cancelled.
    assert night.add(london(2026, 12, 24, 22), 9 * H) == london(2026, 12, 27, 23)
    shipped_variant = cal("support-overnight-cancel-shift")
    assert shipped_variant.spec.holiday_mode == "cancel-shift"
    assert shipped_variant.add(london(2026, 12, 24, 22), 9 * H) == london(2026, 12, 27, 23)


def test_extra_working_day_wins_over_weekend() -> None:
    uk = calendars.from_dict(
        {
            "name": "stocktake",
            "timezone": "Europe/London",
            "week": {"mon-fri": ["09:00-17:30"]},
            "working_days": [
                {"date": date(2026, 6, 6), "hours": ["10:00-14:00"], "reason": "stocktake"}
            ],
        }
    )
    assert uk.add(london(2026, 6, 5, 17), H) == london(2026, 6, 6, 10, 30)


# --- explain ---------------------------------------------------------------------


def test_explain_lists_windows_and_skipped_days() -> None:
    uk = cal("uk-london")
    explanation = uk.explain(datetime.fromisoformat("2026-12-24T16:00+00:00"), 8 * H)
    assert explanation.due == london(2026, 12, 29, 15, 30)
    assert [part.worked for part in explanation.windows] == [
        timedelta(hours=1, minutes=30),
        6.5 * H,
    ]
    kinds = {item.day: item.kind for item in explanation.skipped}
    assert kinds[date(2026, 12, 25)] == "holiday"
    assert kinds[date(2026, 12, 27)] == "weekend"
    text = str(explanation)
    assert "Christmas Day" in text
    assert "Boxing Day" in text
    assert explanation.lines()[1].startswith("due 2026-12-29T15:30")


# --- failures --------------------------------------------------------------------


def test_naive_datetimes_are_refused() -> None:
    uk = cal("uk-london")
    naive = datetime(2026, 6, 5, 9)  # noqa: DTZ001
    with pytest.raises(calendars.NaiveDatetime):
        uk.add(naive, H)
    with pytest.raises(calendars.NaiveDatetime):
        uk.elapsed(london(2026, 6, 5, 9), naive)
    with pytest.raises(calendars.NaiveDatetime):
        uk.is_open(naive)
    with pytest.raises(calendars.NaiveDatetime):
        calendars.REAL_TIME.add(naive, H)


def test_negative_and_huge_budgets_fail_fast() -> None:
    uk = cal("uk-london")
    with pytest.raises(calendars.BudgetOutOfRange):
        uk.add(london(2026, 6, 5, 9), -H)
    with pytest.raises(calendars.BudgetOutOfRange):
        uk.add(london(2026, 6, 5, 9), timedelta(days=365 * 101))
    with pytest.raises(calendars.BudgetOutOfRange):
        # 60 years of working hours need ~270 calendar years.
        uk.add(london(2026, 6, 5, 9), timedelta(days=365 * 60))
    with pytest.raises(calendars.BudgetOutOfRange):
        uk.add(datetime(2350, 1, 1, tzinfo=UTC), H)


def test_calendar_with_working_time_only_once_fails_typed() -> None:
    once = calendars.from_dict(
        {
            "name": "once",
            "timezone": "UTC",
            "week": {},
            "working_days": [{"date": date(2026, 6, 6), "hours": ["10:00-11:00"]}],
        }
    )
    assert once.add(datetime(2026, 1, 1, tzinfo=UTC), H) == datetime(2026, 6, 6, 11, tzinfo=UTC)
    with pytest.raises(calendars.BudgetOutOfRange):
        once.add(datetime(2026, 1, 1, tzinfo=UTC), 2 * H)
    with pytest.raises(calendars.NoWorkingTime):
        once.next_open(datetime(2027, 1, 1, tzinfo=UTC))


def test_large_budget_is_as_cheap_as_a_small_one() -> None:
    uk = cal("uk-london")
    start = london(2026, 6, 5, 9)
    uk.add(start, 400 * H)  # compiles the span once
    due = uk.add(start, 400 * H)
    assert uk.elapsed(start, due) == 400 * H


# --- real time -----------------------------------------------------------------


def test_real_time_is_plain_utc_arithmetic() -> None:
    rt = calendars.REAL_TIME
    assert rt.name == "real-time"
    start = london(2026, 3, 28, 22)
    assert rt.add(start, 8 * H) == datetime(2026, 3, 29, 6, tzinfo=UTC)
    assert rt.elapsed(start, london(2026, 3, 29, 6)) == 7 * H
    assert rt.is_open(start)
    assert rt.next_open(start) == start
    assert str(rt.explain(start, H)).startswith("calendar real-time")
    clock: calendars.BusinessClock = rt
    clock = cal("uk-london")
    assert clock.name == "uk-london"


def test_shipped_folder_is_the_project_calendars() -> None:
    assert SHIPPED.is_dir()
    assert (SHIPPED / "uk-london.toml").is_file()


def test_results_keep_exact_microseconds_and_fold() -> None:
    always = cal("24x7")
    rng = random.Random(7)
    # Near 2026 and past 2**32 s after the epoch (2106), where float timestamps lose µs.
    for base in (datetime(2026, 1, 1, tzinfo=UTC), datetime(2106, 2, 7, 6, tzinfo=UTC)):
        for _ in range(2000):
            budget = timedelta(microseconds=rng.randrange(1, 2 * 3_600_000_000))
            assert always.add(base, budget) == base + budget
    night = cal("support-overnight")
    due = night.add(london(2026, 10, 25, 1, 0), timedelta(minutes=90))  # 01:00 BST + 90 min
    assert due.fold == 1
    assert due.utcoffset() == timedelta(0)
    assert (due.hour, due.minute) == (1, 30)


def test_windows_cut_at_the_compiled_horizon_join_when_it_grows() -> None:
    nights = calendars.from_dict(
        {"name": "nights", "timezone": "UTC", "week": {"mon-sun": ["22:00-06:00"]}}
    )
    assert nights.is_open(datetime(2026, 6, 1, 23, tzinfo=UTC))  # compiles a few years around
    late = datetime(2027, 12, 31, 23, tzinfo=UTC)
    assert nights.next_close(late) == datetime(2028, 1, 1, 6, tzinfo=UTC)
    fresh = calendars.from_dict(
        {"name": "nights", "timezone": "UTC", "week": {"mon-sun": ["22:00-06:00"]}}
    )
    start = datetime(2026, 6, 1, 22, tzinfo=UTC)
    # 2000 whole nights: the last ends at 06:00, 2000 days after the first evening.
    assert fresh.add(start, 8 * H * 2000) == start + timedelta(days=2000, hours=-16)
    assert fresh.elapsed(datetime(2020, 1, 1, tzinfo=UTC), datetime(2040, 1, 1, tzinfo=UTC)) == (
        8 * H * (date(2040, 1, 1) - date(2020, 1, 1)).days
    )
