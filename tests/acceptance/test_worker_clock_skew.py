"""A worker on a host whose clock is 30 s off fires each timer once, on the database's clock.

The worker runs under ``faketime`` (Debian's libfaketime: the process sees its wall clock
shifted, as on a host whose time sync failed). Timers are due 5 s from now by the database's
clock. Watched from outside, with the database's own ``clock_timestamp()``: a worker 30 s fast
must not fire any before it is due, and one 30 s slow must not fire them 30 s late.
"""

from __future__ import annotations

import re
import shutil
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.acceptance.conftest import TASKFLOW, spawn, wait_until
from tests.acceptance.test_workers import Workers, assert_each_fired_once, query, seed

pytestmark = pytest.mark.slow

TIMERS = 50
WATCH = """SELECT clock_timestamp() AS now, count(*) FILTER (WHERE status = 'fired') AS fired,
                  min(due_at) AS first_due, max(due_at) AS last_due
           FROM timer"""


@pytest.mark.parametrize("skew", ["+30s", "-30s"])
def test_a_worker_whose_host_clock_is_off_fires_each_timer_once_when_due(
    database_url: str, tmp_path: Path, skew: str
) -> None:
    assert shutil.which("faketime"), "apt-get install faketime (Debian's; .ci/run installs it)"
    workers = Workers(database_url, tmp_path)
    env = {**workers.env, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    log = tmp_path / "worker-0.log"
    workers.processes.append(
        spawn(["faketime", "-f", skew, *TASKFLOW, "worker", "--batch", "10"], env, log)
    )
    try:
        wait_until(lambda: "worker started" in log.read_text(), 60, "the worker to start")
        ahead_or_behind = "ahead of" if skew.startswith("+") else "behind"
        said = re.search(rf"clock is (\S+) s {ahead_or_behind} the database's", log.read_text())
        assert said, log.read_text()
        assert abs(float(said[1]) - 30) < 1, said[0]

        # Armed once the worker runs (its first pass is done, so it sleeps until the nearest
        # is due by its clock): due 5 s from now by the database's.
        seed(database_url, TIMERS, spread=1.0, offset=5.0)
        first_seen = None
        deadline = time.monotonic() + 120
        while first_seen is None:
            assert time.monotonic() < deadline, f"no timer fired\n{workers.output()}"
            [row] = query(database_url, WATCH)
            if row["fired"]:
                first_seen = row
            time.sleep(0.1)
        # Not one fired before the database's clock reached the first due time ...
        assert first_seen["now"] >= first_seen["first_due"], dict(first_seen)
        # ... nor the skew's 30 s late (a pass every second; slack for a loaded machine).
        assert first_seen["now"] < first_seen["last_due"] + timedelta(seconds=20), dict(first_seen)
        wait_until(
            lambda: query(database_url, WATCH)[0]["fired"] == TIMERS, 60, "every timer to fire"
        )
        assert_each_fired_once(database_url, TIMERS)
        fired = query(database_url, "SELECT count(*) AS n FROM timer WHERE fired_at < due_at")
        assert fired[0]["n"] == 0  # stamped on the database's clock too
    finally:
        workers.stop()
