"""Effective-dated calendars: piecewise arithmetic, an unchanged past, and refusals."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskflow.core.clocks import calendars
from taskflow.core.clocks.calendars import diff, versions
from taskflow.service.clocks import calendar_files
from tests.unit.calendars.helpers import ZONES, Oracle, zone_table
from tests.unit.calendars.versioned import PiecewiseOracle, random_instant, versioned_table

CASES = [(zone, count) for zone in ZONES for count in (1, 3, 20)]


@pytest.mark.parametrize(("zone", "count"), CASES)
def test_elapsed_and_add_agree_with_the_piecewise_oracle(zone: str, count: int) -> None:
    calendar = calendars.from_dict(versioned_table(zone, count, seed=count))
    assert len(calendar.versions) == count + 1
    oracle = PiecewiseOracle(calendar, 2024, 2033)
    rng = random.Random(count)
    edges = [v.effective for v in calendar.versions[1:] if v.effective is not None]
    for _ in range(300):
        # Half the intervals straddle a change, some start or end exactly on one.
        if rng.random() < 0.5:
            edge = rng.choice(edges)
            t0 = edge - timedelta(hours=rng.choice([0, 1, 30, 24 * 20]))
            t1 = edge + timedelta(hours=rng.choice([0, 2, 50, 24 * 40]))
        else:
            t0 = random_instant(rng, date(2025, 6, 1), date(2031, 1, 1))
            t1 = t0 + timedelta(minutes=rng.randrange(0, 60 * 24 * 200))
        expected = oracle.elapsed(t0, t1)
        assert calendar.elapsed(t0, t1) == expected, (t0, t1)
        if expected:
            # The due instant of exactly that much work is the first instant it has accrued.
            due = calendar.add(t0, expected)
            assert due <= t1
            assert oracle.elapsed(t0, due) == expected


VERSIONED = [
    calendars.from_dict(versioned_table(zone, 20, seed=7, mode=mode))
    for zone in ("Europe/Berlin", "Pacific/Chatham", "America/Santiago")
    for mode in ("remove-date", "cancel-shift")
]
LO = datetime(2025, 1, 1, tzinfo=UTC)
SPAN_MIN = (datetime(2031, 1, 1, tzinfo=UTC) - LO) // timedelta(minutes=1)
instant_st = st.integers(0, SPAN_MIN).map(lambda m: LO + timedelta(minutes=m))
PROFILE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(st.sampled_from(VERSIONED), instant_st, instant_st, st.data())
def test_elapsed_is_additive_across_changes(
    calendar: calendars.Calendar, a: datetime, c: datetime, data: st.DataObject
) -> None:
    a, c = sorted((a, c))
    inside = [v.effective for v in calendar.versions[1:] if v.effective and a <= v.effective <= c]
    # b is a change instant between a and c when there is one, else any instant between.
    b = data.draw(st.sampled_from(inside)) if inside else a + (c - a) / 2
    assert calendar.elapsed(a, c) == calendar.elapsed(a, b) + calendar.elapsed(b, c)


@PROFILE
@given(st.sampled_from(VERSIONED), instant_st, st.integers(0, 400 * 60))
def test_add_inverts_elapsed_across_changes(
    calendar: calendars.Calendar, start: datetime, minutes: int
) -> None:
    budget = timedelta(minutes=minutes)
    due = calendar.add(start, budget)
    assert calendar.elapsed(start, due) == budget
    assert calendar.add(start, budget + timedelta(seconds=1)) > due or budget == timedelta(0)


def test_a_version_from_next_month_leaves_every_earlier_instant_as_it_was() -> None:
    table = zone_table("Europe/Berlin")
    before = calendars.from_dict(table)
    change = datetime(2027, 1, 4, tzinfo=UTC)  # next month, a Monday (1 January is a holiday)
    edited = calendars.from_dict(
        {**table, "versions": [{"effective": change, "week": {"mon-sun": ["00:00-24:00"]}}]}
    )
    rng = random.Random(3)
    for _ in range(500):
        t0 = random_instant(rng, date(2025, 1, 1), date(2026, 12, 31))
        t1 = min(t0 + timedelta(hours=rng.randrange(0, 24 * 300)), change)
        assert edited.elapsed(t0, t1) == before.elapsed(t0, t1)
        due = before.add(t0, timedelta(minutes=rng.randrange(0, 600)))
        if due <= change:
            assert edited.add(t0, before.elapsed(t0, due)) == due
    # From the change on, the new hours count: a whole day of work per day.
    assert edited.elapsed(change, change + timedelta(days=2)) == timedelta(days=2)


def test_a_single_version_compiles_exactly_as_before() -> None:
    for zone in ZONES:
        calendar = calendars.from_dict(zone_table(zone))
        oracle = Oracle(calendar, 2026, 2029)
        assert calendar.intervals(2026, 2029) == (oracle.starts, oracle.ends)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "desk.toml"
    path.write_text(text)
    return path


BASE = """name = "desk"
timezone = "Europe/London"

[week]
mon-fri = ["09:00-17:00"]
"""


def test_versions_out_of_order_are_refused_naming_the_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        BASE + "\n[[versions]]\neffective = 2027-03-01\n[versions.week]\nmon-fri = []\n"
        "\n[[versions]]\neffective = 2027-03-01T00:00:00Z\n",
    )
    with pytest.raises(calendars.CalendarFileError) as refused:
        calendar_files.load(path)
    assert refused.value.line == 13
    assert refused.value.key == "versions[1].effective"
    assert "two versions would be in force at once" in refused.value.message
    assert f"{path}:13" in refused.value.message


@pytest.mark.parametrize(
    ("extra", "key", "line"),
    [
        ('\n[[versions]]\neffective = "soon"\n', "versions[0].effective", 8),
        ("\n[[versions]]\ntimezone = 'UTC'\neffective = 2027-01-01\n", "versions[0].timezone", 8),
        ("\n[[versions]]\n[versions.week]\nmon = []\n", "versions[0].effective", 7),
        ('\n[[versions]]\neffective = 2027-01-01\n[versions.week]\nmon = ["9-5"]\n', None, 10),
    ],
)
def test_bad_versions_are_refused_naming_key_and_line(
    tmp_path: Path, extra: str, key: str | None, line: int
) -> None:
    with pytest.raises(calendars.CalendarFileError) as refused:
        calendar_files.load(_write(tmp_path, BASE + extra))
    if key is not None:
        assert refused.value.key == key
    assert refused.value.line == line


def test_an_edit_taking_effect_beyond_the_past_window_is_refused() -> None:
    table = zone_table("Europe/Berlin")
    old = calendars.from_dict(table)
    now = datetime(2026, 12, 4, 12, tzinfo=UTC)
    window = timedelta(hours=24)

    def edited(when: datetime) -> calendars.Calendar:
        return calendars.from_dict({**table, "versions": [{"effective": when, "week": {}}]})

    assert versions.check_edit(old.versions, old.versions, now, window) is None
    fine = now - timedelta(hours=23)
    assert versions.check_edit(old.versions, edited(fine).versions, now, window) == fine
    with pytest.raises(calendars.CalendarFileError) as refused:
        versions.check_edit(old.versions, edited(now - timedelta(days=3)).versions, now, window)
    assert refused.value.key == "versions[0]"
    assert "past SLA outcomes would change" in refused.value.message
    # Editing the top-level table changes working time since always.
    changed = calendars.from_dict({**table, "week": {"mon-fri": ["10:00-11:00"]}})
    with pytest.raises(calendars.CalendarFileError, match="since always"):
        versions.check_edit(old.versions, changed.versions, now, window)


def test_an_inheriting_calendar_follows_its_parents_versions() -> None:
    parent = calendars.from_dict(
        {
            "name": "parent",
            "timezone": "UTC",
            "week": {"mon-fri": ["09:00-17:00"]},
            "versions": [{"effective": date(2027, 1, 4), "week": {"mon-fri": ["08:00-18:00"]}}],
        }
    )
    child = calendars.from_dict(
        {
            "name": "child",
            "inherits": "parent",
            "week": {"sat": ["10:00-12:00"]},
            "versions": [{"effective": date(2027, 1, 11), "week": {"sat": []}}],
        },
        parent=parent,
    )
    assert [v.effective for v in child.versions] == [
        None,
        datetime(2027, 1, 4, tzinfo=UTC),
        datetime(2027, 1, 11, tzinfo=UTC),
    ]
    week = timedelta(days=7)
    assert child.elapsed(datetime(2026, 12, 28, tzinfo=UTC), datetime(2027, 1, 4, tzinfo=UTC)) == (
        timedelta(hours=5 * 8 + 2)
    )
    monday = datetime(2027, 1, 4, tzinfo=UTC)
    assert child.elapsed(monday, monday + week) == timedelta(hours=5 * 10 + 2)
    assert child.elapsed(monday + week, monday + 2 * week) == timedelta(hours=5 * 10)


def test_diff_names_each_changed_version() -> None:
    table = zone_table("Europe/Berlin")
    old = calendars.from_dict(table)
    new = calendars.from_dict(
        {**table, "versions": [{"effective": date(2027, 3, 1), "week": {"fri": []}}]}
    )
    lines = diff.lines(old.versions, new.versions)
    assert lines[0] == "= version since always (top level)"
    assert lines[1:] == [
        "+ version from 2027-03-01T00:00:00+01:00 (versions[0])",
        "    fri: 00:00-03:00 09:00-17:00 -> closed",
    ]
    same = diff.lines(new.versions, new.versions)
    assert same == [lines[0], "= version from 2027-03-01T00:00:00+01:00 (versions[0])"]
    edited = calendars.from_dict(
        {**table, "versions": [{"effective": date(2027, 3, 1), "week": {"fri": ["09:00-10:00"]}}]}
    )
    assert diff.lines(new.versions, edited.versions)[2] == "    fri: closed -> 09:00-10:00"


def test_explain_names_the_versions_that_took_effect_on_the_way() -> None:
    calendar = calendars.from_dict(
        {
            "name": "desk",
            "timezone": "Europe/London",
            "week": {"mon-fri": ["09:00-17:30"]},
            "versions": [
                {
                    "effective": date(2027, 3, 1),
                    "description": "longer hours from March",
                    "week": {"mon-fri": ["08:00-18:00"]},
                }
            ],
        }
    )
    friday = datetime(2027, 2, 26, 16, tzinfo=UTC)
    explained = calendar.explain(friday, timedelta(hours=8))
    assert explained.due == datetime(2027, 3, 1, 14, 30, tzinfo=UTC)
    assert explained.lines()[-2:] == [
        "calendar changed:",
        "  from 2027-03-01T00:00:00+00:00: longer hours from March (versions[0])",
    ]
    assert calendar.explain(friday, timedelta(hours=1)).changes == ()
