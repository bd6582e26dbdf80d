"""Run deadlines, pure: reading a subject date (zones, the end of a business day over a
weekend and a holiday), the load-time checks, and the status at and around the due instant."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from taskflow.core.clocks import calendars, run_deadline, subject_dates
from taskflow.core.definition import Deadline, Route, Slot, State, Workflow, real, subject, who
from taskflow.core.definition.checks import validate
from taskflow.core.runs.model import RunView
from taskflow.service.clocks import calendar_files

CALENDARS = Path(__file__).resolve().parents[2] / "calendars"


@pytest.fixture(scope="module")
def registry() -> calendars.Registry:
    return calendar_files.load_folder(CALENDARS)


def test_a_date_time_is_read_in_the_zone_and_a_date_ends_that_day_there() -> None:
    read = subject_dates.parse_instant
    assert read("2026-12-02T12:00:00", "Europe/Berlin", "d") == datetime(
        2026, 12, 2, 11, tzinfo=UTC
    )
    assert read("2026-12-02T12:00:00Z", "Europe/Berlin", "d") == datetime(
        2026, 12, 2, 12, tzinfo=UTC
    )
    assert read("2026-07-02", "Europe/Berlin", "d") == datetime(2026, 7, 2, 22, tzinfo=UTC)
    assert read("2026-07-02", None, "d") == datetime(2026, 7, 3, tzinfo=UTC)
    assert read(None, None, "d") is None


def test_the_end_of_a_business_day_steps_back_over_weekends_and_holidays(
    registry: calendars.Registry,
) -> None:
    london = registry.get("uk-london")
    friday = datetime(2026, 12, 4, 17, 30, tzinfo=UTC)
    assert subject_dates.end_of_business_day(london, date(2026, 12, 4)) == friday
    assert subject_dates.end_of_business_day(london, date(2026, 12, 6)) == friday  # a Sunday
    # Christmas and Boxing Day (Saturday, moved to Monday 28th) are holidays on uk-london.
    eve = subject_dates.end_of_business_day(london, date(2026, 12, 28))
    assert eve.date() == date(2026, 12, 24)


@pytest.mark.parametrize("bad", ["soon", "2026-02-30", 20261203, ["2026-12-03"], "12/03/2026"])
def test_anything_else_is_refused_naming_the_attribute(bad: object) -> None:
    with pytest.raises(subject_dates.BadSubjectDate) as refused:
        subject_dates.parse_instant(bad, None, "contract.due_date")
    assert refused.value.facts == {"field": "subject.contract.due_date"}
    assert "subject.contract.due_date" in str(refused.value)


class _Base(Workflow):
    tracks = "thing"
    work = State(initial=True, slots=[Slot("do", candidates=who.role("x"))], then=[Route("done")])
    done = State(terminal=True)


def _problems(rule: Deadline) -> list[tuple[str, str]]:
    definition = dataclasses.replace(_Base.definition, name="thing", deadline=rule)  # type: ignore[arg-type]
    return [(p.code, p.message) for p in validate.problems(definition, {"uk-london"})]


def test_load_refuses_an_unknown_zone_state_event_or_calendar_and_a_bad_shape() -> None:
    assert _problems(Deadline(at=subject.due, zone="Mars/Olympus")) == [
        ("UNKNOWN_TIME_ZONE", "time zone 'Mars/Olympus' is unknown")
    ]
    assert [c for c, _ in _problems(Deadline(after=real.days(1), move_to="nowhere"))] == [
        "UNKNOWN_STATE"
    ]
    assert [c for c, _ in _problems(Deadline(after=real.days(1), raise_event="late"))] == [
        "UNKNOWN_EVENT"
    ]
    assert [c for c, _ in _problems(Deadline(at=subject.due, calendar="mars"))] == [
        "UNKNOWN_CALENDAR"
    ]
    assert [c for c, _ in _problems(Deadline())] == ["BAD_DEADLINE"]
    assert _problems(Deadline(after=real.days(1), move_to="done", notify=who.role("x"))) == []


def test_the_status_at_and_around_the_due_instant(registry: calendars.Registry) -> None:
    start = datetime(2026, 12, 1, 9, tzinfo=UTC)
    definition = dataclasses.replace(
        _Base.definition,  # type: ignore[arg-type]
        deadline=Deadline(after=real.hours(4)),
    )
    run = RunView("r", "thing", 1, "work", "active", 1, {}, start, started_at=start)
    found = run_deadline.due(definition, run, registry)
    assert found is not None
    assert (found.due_at, found.at_risk_at) == (
        datetime(2026, 12, 1, 13, tzinfo=UTC),
        datetime(2026, 12, 1, 12, tzinfo=UTC),
    )
    status = run_deadline.status
    assert status(found, run, datetime(2026, 12, 1, 11, tzinfo=UTC), None) == "on_time"
    assert status(found, run, datetime(2026, 12, 1, 12, tzinfo=UTC), None) == "at_risk"
    assert status(found, run, found.due_at, None) == "breached"
    ended = dataclasses.replace(run, status="completed", ended_at=found.due_at)
    assert status(found, ended, datetime(2026, 12, 9, tzinfo=UTC), None) == "on_time"
    assert status(found, ended, datetime(2026, 12, 9, tzinfo=UTC), found.due_at) == "breached"
