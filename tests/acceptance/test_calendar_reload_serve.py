"""A running `taskflow serve` serves an edited calendars folder without a restart (the watch
every TASKFLOW_CALENDAR_RELOAD_SECONDS; docs/calendars.md, "ICS feeds over HTTPS")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskflow.config import config
from tests.acceptance.conftest import Deployment, stop, wait_until

pytestmark = pytest.mark.slow

DESCRIBED = '{ calendars(name: "uk-london") { description } }'


def test_serve_picks_up_an_edited_calendar_without_a_restart(deployment: Deployment) -> None:
    folder = deployment.data_dir.parent / "calendars"
    shutil.copytree(Path(config.PROJECT_ROOT) / "calendars", folder)
    deployment.env["TASKFLOW_CALENDARS"] = str(folder)
    deployment.env["TASKFLOW_CALENDAR_RELOAD_SECONDS"] = "0.5"
    assert deployment.run("principals", "load", "examples/principals.json").returncode == 0
    token = deployment.run("token", "ada", "--ttl", "1h").stdout.strip()
    server = deployment.serve()
    try:

        def described() -> str:
            return str(deployment.data(token, DESCRIBED)["calendars"][0]["description"])

        before = described()
        edited = folder / "uk-london.toml"
        text = edited.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("name"))
        edited.write_text(text.replace(line, f'{line}\ndescription = "London office, moved"', 1))
        wait_until(lambda: described() == "London office, moved", 30, "the edit to be served")
        assert before != "London office, moved"
        assert server.poll() is None  # the same process, never restarted
    finally:
        stop([server], 10)
