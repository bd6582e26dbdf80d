"""``taskflow principals hours`` / ``leave`` / ``team-calendar``: working hours, leave and a
team's own calendar from the command line, bad input refused in one line with nothing changed."""

from __future__ import annotations

import pytest

from taskflow import cli
from tests.integration.test_token_cli import cli_env, fiona_as_stored

__all__ = ["cli_env"]  # the fixture, shared with the token command's tests


def stored(database_url: str) -> tuple[object, list[dict[str, object]]]:
    fiona = fiona_as_stored(database_url)
    hours = fiona.working_hours.as_dict() if fiona.working_hours else None
    return hours, [entry.as_dict() for entry in fiona.leave]


def test_hours_and_leave_are_set_and_removed(
    cli_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    windows = '{"mon": [["09:00", "17:00"]]}'
    assert (
        cli.main(
            ["principals", "hours", "fiona", "--time-zone", "Europe/Berlin", "--windows", windows]
        )
        == 0
    )
    assert "'fiona' hours" in capsys.readouterr().out
    span = ["2026-12-24T00:00:00+00:00", "2026-12-28T00:00:00+00:00"]
    assert cli.main(["principals", "leave", "fiona", *span, "--note", "Christmas"]) == 0
    hours, leave = stored(cli_env)
    assert hours == {"time_zone": "Europe/Berlin", "windows": {"mon": [["09:00", "17:00"]]}}
    assert leave == [{"from": span[0], "to": span[1], "note": "Christmas"}]
    assert cli.main(["principals", "leave", "fiona", *span, "--remove"]) == 0
    assert cli.main(["principals", "hours", "fiona", "--clear"]) == 0
    assert stored(cli_env) == (None, [])


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["hours", "fiona", "--windows", "{mon"], "not JSON"),
        (["hours", "fiona", "--calendar", "atlantis"], "no calendar"),
        (["leave", "fiona", "2026-12-28T00:00:00+00:00", "2026-12-24T00:00:00+00:00"], "end after"),
        (
            [
                "leave",
                "fiona",
                "2026-12-24T00:00:00+00:00",
                "2026-12-28T00:00:00+00:00",
                "--remove",
            ],
            "no leave",
        ),
        (["team-calendar", "finance", "uk-london"], "not a team key"),
        (["team-calendar", "role:finance", "atlantis"], "no calendar"),
        (["team-calendar", "role:finance"], "--clear"),
    ],
)
def test_bad_input_is_refused_in_one_line_and_changes_nothing(
    cli_env: str, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    assert cli.main(["principals", *argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert words in err
    assert stored(cli_env) == (None, [])


def test_a_teams_calendar_is_set_and_cleared(
    cli_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["principals", "team-calendar", "role:finance", "uk-london"]) == 0
    out = capsys.readouterr().out
    assert "team 'role:finance' calendar uk-london; clocks of 0 live slot(s) moved" in out
    assert cli.main(["principals", "team-calendar", "role:finance", "--clear"]) == 0
    assert "calendar (none of its own)" in capsys.readouterr().out
