"""The CLI's answer to bad files, closed pipes, typos and reversed ranges: one clear line on
stderr and a non-zero exit, never a traceback and never a silent ignore."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taskflow.cli import main
from tests.conftest import TEST_SECRET


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every failure here comes before any database is needed (none is reachable).
    monkeypatch.setenv("TASKFLOW_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", TEST_SECRET)
    monkeypatch.setenv("TASKFLOW_DATA_DIR", str(tmp_path / "data"))


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_missing_principals_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert main(["principals", "load", str(missing)]) == 1
    line = _one_line(capsys)
    assert line.startswith("taskflow: error: cannot read or write")
    assert str(missing) in line
    assert "No such file" in line


def test_an_unreadable_principals_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "people.json"
    folder.mkdir()  # unreadable as a file, whoever runs the test (root included)
    assert main(["principals", "load", str(folder)]) == 1
    assert str(folder) in _one_line(capsys)
    binary = tmp_path / "people.csv"
    binary.write_bytes(b"id,display_name\n\xff\xfe,x\n")
    assert main(["principals", "load", str(binary)]) == 1
    assert "not UTF-8" in _one_line(capsys)


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_an_unknown_key_in_a_principals_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"people.{suffix}"
    if suffix == "json":
        path.write_text(json.dumps([{"id": "x", "display_name": "X", "rolez": ["lead"]}]))
    else:
        path.write_text("id,display_name,rolez\nx,X,lead\n")
    assert main(["principals", "load", str(path)]) == 1
    line = _one_line(capsys)
    assert "unknown key 'rolez' (did you mean 'roles'?)" in line
    assert "record 1 ('x')" in line


def test_calendar_elapsed_refuses_an_end_before_its_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["calendar", "elapsed", "uk-london", "2026-12-02T00:00+00:00", "2026-12-01T00:00+00:00"]
    )
    assert code == 1
    line = _one_line(capsys)
    assert "END 2026-12-01T00:00+00:00 is before START 2026-12-02T00:00+00:00" in line
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "args",
    [
        ["calendar", "due", "uk-london", "0001-01-01T00:00+14:00", "8h"],
        ["calendar", "due", "real-time", "9999-12-31T23:00+00:00", "8h"],
        ["calendar", "elapsed", "real-time", "0001-01-01T00:00+14:00", "2026-01-01T00:00Z"],
        ["calendar", "due", "uk-london", "2026-12-01T16:00+00:00", "999999999999999999999h"],
    ],
)
def test_calendar_arithmetic_out_of_range_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert main(args) == 1
    assert _one_line(capsys).startswith("taskflow: error [")


def test_a_closed_pipe_is_one_line_and_a_failure() -> None:
    # `taskflow show expense-approval | head -1` once head has gone: a real process writing
    # into a real pipe whose reading end is closed.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "taskflow", "show", "expense-approval"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "taskflow: error: the output was closed before it was all written (e.g. piped into "
        "head); the rest was dropped."
    ]


def test_a_duration_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "fiona", "--ttl", "99999999999d"]) == 1
    assert "out of range" in _one_line(capsys)
