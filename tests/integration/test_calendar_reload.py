"""Calendars reloaded without a restart (docs/calendars.md, "ICS feeds over HTTPS"): a
process's watch of the calendars folder serves an edited file in one swap, and keeps the
calendars in use when the folder no longer loads or its calendar names changed."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from taskflow.service.clocks import calendar_files, calendar_reload
from taskflow.service.common import container
from tests.conftest import with_settings

DESK = """name = "desk"
timezone = "UTC"
[week]
mon-fri = ["09:00-17:00"]
[[ics]]
file = "closures.ics"
"""
ICS = (
    "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n"
    "BEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:{day}\nSUMMARY:Stocktake\nEND:VEVENT\n"
    "END:VCALENDAR\n"
)
TUESDAY, THURSDAY = dt.date(2027, 1, 5), dt.date(2027, 1, 7)

pytestmark = pytest.mark.anyio


def on_calendars(services: container.Services, folder: Path) -> container.Services:
    """``services`` reading their calendars from ``folder`` (loaded now)."""
    return dataclasses.replace(
        with_settings(services, calendars=folder), calendars=calendar_files.load_folder(folder)
    )


def stocktakes(services: container.Services, days: tuple[dt.date, ...]) -> list[dt.date]:
    """Which of ``days`` desk's calendar closes for the stocktake."""
    desk = services.calendars.get("desk")
    return [d for d in days if desk.day_plan(d).reason == "Stocktake"]


@pytest.fixture
async def on_folder(services: container.Services, tmp_path: Path) -> container.Services:
    (tmp_path / "desk.toml").write_text(DESK)
    (tmp_path / "closures.ics").write_text(ICS.format(day="20270105"))
    return on_calendars(services, tmp_path)


def closed(services: container.Services) -> list[dt.date]:
    return stocktakes(services, (TUESDAY, THURSDAY))


async def test_an_edited_closure_file_is_served_at_the_next_look(
    on_folder: container.Services, tmp_path: Path
) -> None:
    watch = calendar_reload.Watch(on_folder)
    held = on_folder.calendars.get("desk")  # a reader holding the old calendar keeps it whole
    assert watch.check() is False  # nothing changed
    (tmp_path / "closures.ics").write_text(ICS.format(day="20270107") + "\n")
    assert watch.check() is True
    assert closed(on_folder) == [THURSDAY]
    assert held.day_plan(TUESDAY).reason == "Stocktake"
    assert watch.check() is False  # seen once, not reloaded again


async def test_a_folder_that_no_longer_loads_or_renames_keeps_the_calendars_in_use(
    on_folder: container.Services, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watch = calendar_reload.Watch(on_folder)
    (tmp_path / "closures.ics").write_text(ICS.format(day="20271345"))  # month 13
    assert watch.check() is False
    assert closed(on_folder) == [TUESDAY]
    assert "no longer load" in caplog.text

    (tmp_path / "closures.ics").write_text(ICS.format(day="20270107"))
    (tmp_path / "desk.toml").write_text(DESK.replace('"desk"', '"front-desk"'))
    assert watch.check() is False
    assert closed(on_folder) == [TUESDAY]
    assert "restart to load them" in caplog.text


async def test_the_look_s_interval_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFLOW_CALENDAR_RELOAD_SECONDS", "2.5")
    assert calendar_reload.every() == 2.5
    monkeypatch.setenv("TASKFLOW_CALENDAR_RELOAD_SECONDS", "soon")
    with pytest.raises(Exception, match="is not a number of seconds"):
        calendar_reload.every()
