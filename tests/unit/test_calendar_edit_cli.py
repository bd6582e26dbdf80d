"""``taskflow calendar diff | import-ics | export-ics``: files only, nothing half-applied."""

from __future__ import annotations

from pathlib import Path

import icalendar
import pytest

from taskflow.cli import main
from taskflow.service.clocks import calendar_files
from tests.unit.test_calendar_ics import CLOSURES, HEAD, TAIL, event

DESK = 'name = "desk"\ntimezone = "UTC"\n\n[week]\nmon-fri = ["09:00-17:00"]\n'


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("TASKFLOW_SECRET_KEYS", raising=False)
    monkeypatch.delenv("TASKFLOW_CALENDAR_PAST_WINDOW", raising=False)
    home = tmp_path / "calendars"
    home.mkdir()
    (home / "desk.toml").write_text(DESK)
    monkeypatch.setenv("TASKFLOW_CALENDARS", str(home))
    return home


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_import_ics_adds_a_version_from_now(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "closed.ics"
    source.write_text(CLOSURES)
    assert main(["calendar", "import-ics", str(source), "--calendar", "desk"]) == 0
    assert "imported closed.ics into desk: 5 closure(s)" in capsys.readouterr().out
    assert (folder / "closed.ics").read_text() == CLOSURES
    calendar = calendar_files.load_folder(folder).get("desk")
    [first, imported] = calendar.versions
    assert first.effective is None
    assert imported.description == "imported closed.ics"
    assert len(imported.spec.closures) == 5
    text = (folder / "desk.toml").read_text()
    assert text.startswith(DESK)
    assert '[[versions.ics]]\nfile = "closed.ics"' in text


@pytest.mark.parametrize(
    ("ics_text", "extra", "words"),
    [
        (HEAD + event("x", "DTSTART;VALUE=DATE:20271345") + TAIL, [], "closed.ics:6"),
        (
            HEAD + event("x", "DTSTART;VALUE=DATE:2027", "RRULE:FREQ=NEVER") + TAIL,
            [],
            "closed.ics:",
        ),
        (CLOSURES, ["--effective", "2020-01-01T00:00Z"], "past SLA outcomes would change"),
    ],
)
def test_a_refused_import_changes_no_file(
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ics_text: str,
    extra: list[str],
    words: str,
) -> None:
    source = tmp_path / "closed.ics"
    source.write_text(ics_text)
    before = _snapshot(folder)
    assert main(["calendar", "import-ics", str(source), "--calendar", "desk", *extra]) == 1
    assert words in capsys.readouterr().err
    assert _snapshot(folder) == before


def test_diff_shows_versions_and_refuses_a_change_to_the_past(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "desk-next.toml").write_text(
        DESK.replace('"desk"', '"desk-next"')
        + "\n[[versions]]\neffective = 2099-01-04\n[versions.week]\nfri = []\n"
    )
    (folder / "desk-past.toml").write_text(
        DESK.replace('"desk"', '"desk-past"').replace("17:00", "18:00")
    )
    assert main(["calendar", "diff", "desk", "desk-next"]) == 0
    out = capsys.readouterr().out
    assert (
        "+ version from 2099-01-04T00:00:00+00:00 (versions[0])\n    fri: 09:00-17:00 -> closed"
        in out
    )
    assert "working time differs from 2099-01-04T00:00:00+00:00" in out
    assert main(["calendar", "diff", "desk", "desk-past"]) == 1
    out = capsys.readouterr().out
    assert "    mon: 09:00-17:00 -> 09:00-18:00" in out
    assert "REFUSED as an edit of desk" in out
    assert main(["calendar", "diff", "desk", "desk"]) == 0
    assert "no change" in capsys.readouterr().out


def test_export_ics_writes_a_year(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "desk.ics"
    args = ["calendar", "export-ics", "desk", "--from", "2027-01-01T00:00Z", "-o", str(out)]
    assert main(args) == 0
    events = list(icalendar.Calendar.from_ical(out.read_bytes()).walk("VEVENT"))
    assert len(events) == 261  # the weekdays of 2027 (and 3 January 2028 is outside)
