"""``taskflow webhooks listen`` as a real process: when no event comes, it says why."""

from __future__ import annotations

import pytest

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow


def test_listen_that_times_out_says_why_on_stderr(deployment: Deployment) -> None:
    assert deployment.run("migrate").returncode == 0
    loaded = deployment.run("principals", "load", "examples/principals.json")
    assert loaded.returncode == 0, loaded.stderr

    # Nothing starts a run: the listener waits its --timeout for 1 event, then stops.
    waited = deployment.run(
        "webhooks", "listen", "--as", "ada", "--workflow", "support-ticket",
        "--count", "1", "--timeout", "2",
    )  # fmt: skip
    assert waited.returncode == 1
    assert '{"events": 0}' in waited.stdout
    said = waited.stderr.strip().splitlines()[-1]
    assert said.startswith("taskflow webhooks listen: no event arrived in 2 s."), waited.stderr
    assert "Was a run started" in said
    assert "RunExists" in said
    assert "taskflow worker" in said
