"""``taskflow calendar``: check, due and elapsed, without a database or secret."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from taskflow.cli import calendar_cmd, main
from tests.unit.calendars.helpers import SHIPPED


@pytest.fixture(autouse=True)
def _shipped_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKFLOW_CALENDARS", str(SHIPPED))
    monkeypatch.delenv("TASKFLOW_SECRET_KEYS", raising=False)


def test_check_validates_the_shipped_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calendar", "check"]) == 0
    out = capsys.readouterr().out
    assert "uk-london" in out
    assert "calendar(s) valid, 0 invalid" in out


def test_check_reports_every_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.toml").write_text('name = "a"\ntimezone = "UTC"\n[week]\nmon = ["9-5"]\n')
    (tmp_path / "b.toml").write_text('name = "b"\n[week]\nmon = ["09:00-17:00"]\n')
    assert main(["calendar", "check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "a.toml:4, key 'week.mon'" in out  # the line of the bad window
    assert "b.toml, key 'timezone'" in out


def test_due_prints_instant_and_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calendar", "due", "uk-london", "2026-12-24T16:00+00:00", "8h"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2026-12-29T15:30:00+00:00"
    assert any("Christmas Day" in line for line in lines)


def test_elapsed_and_real_time(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["support-overnight", "2026-03-28T21:00+00:00", "2026-03-29T07:00+01:00"]
    assert main(["calendar", "elapsed", *args]) == 0
    assert capsys.readouterr().out.startswith("7h00m")
    assert main(["calendar", "due", "real-time", "2026-03-28T22:00Z", "90m", "-q"]) == 0
    assert capsys.readouterr().out.strip() == "2026-03-28T23:30:00+00:00"


def test_errors_are_typed_and_say_what_to_write(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calendar", "due", "nope", "2026-12-24T16:00+00:00", "8h"]) == 1
    assert "known calendars are" in capsys.readouterr().err
    assert main(["calendar", "due", "uk-london", "2026-12-24T16:00", "8h"]) == 1
    assert "NAIVE_DATETIME" in capsys.readouterr().err
    assert main(["calendar", "due", "uk-london", "2026-12-24T16:00Z", "8 hours"]) == 1
    assert "8h, 90m" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8h", timedelta(hours=8)),
        ("90m", timedelta(minutes=90)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("1.5h", timedelta(hours=1, minutes=30)),
        ("45s", timedelta(seconds=45)),
        ("08:30", timedelta(hours=8, minutes=30)),
    ],
)
def test_parse_budget(text: str, expected: timedelta) -> None:
    assert calendar_cmd.parse_budget(text) == expected
