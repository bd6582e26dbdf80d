"""The pooler restarts under a running deployment: answers say the database is unavailable
while it is gone, everything recovers by itself once it is back, no timer is lost or doubled.

One ``taskflow serve`` and one ``taskflow worker`` reach PostgreSQL through a PgBouncer of
this test's own (transaction mode; LISTEN and migrations on the direct URL, as docs/deploy.md
says). The pooler is killed outright (SIGKILL: every connection through it is cut) while
timers fall due, left down for a few seconds, and started again on the same port.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from taskflow.service.access import tokens
from tests.acceptance import pooler
from tests.acceptance.conftest import stopping, wait_until
from tests.acceptance.test_scale_out import Fleet, _healthy
from tests.acceptance.test_soak import KEY
from tests.acceptance.test_workers import armed, assert_each_fired_once, seed

pytestmark = pytest.mark.slow

TIMERS = 200
ME = {"query": "{ me { id } }"}


def _ask(port: int, token: str) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{port}/graphql",
        json=ME,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_a_pooler_restart_is_answered_as_unavailable_and_recovered_from(
    database_url: str, pg_admin_url: str, tmp_path: Path
) -> None:
    with (
        pooler.own_pgbouncer(pg_admin_url) as bouncer,
        stopping(Fleet(pooler.through(bouncer.url, database_url), database_url, tmp_path)) as fleet,
    ):
        fleet.run("principals", "load", "examples/principals.json")
        port = fleet.start_api("serve")
        fleet.start("worker", "worker", "--batch", "20")
        wait_until(lambda: _healthy(fleet, port), 90, "serve to be healthy")
        token = tokens.StaffTokens((KEY,)).mint("frank", datetime.now(UTC), timedelta(hours=1))
        assert _ask(port, token).json()["data"]["me"]["id"]

        seed(database_url, TIMERS, spread=4.0, offset=1.0)  # due while the pooler is down
        bouncer.kill()
        down = _ask(port, token)
        assert down.status_code == 503, down.text
        assert [e["extensions"]["code"] for e in down.json()["errors"]] == ["UNAVAILABLE"]
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=30)
        assert (health.status_code, health.json()["database"]) == (503, "unreachable")
        time.sleep(6)  # a real outage: every timer falls due meanwhile
        assert armed(database_url) == TIMERS  # none fired without the database
        bouncer.start()

        wait_until(lambda: _ask(port, token).status_code == 200, 60, "the API to recover")
        wait_until(lambda: armed(database_url) == 0, 90, "every timer to fire")
        assert_each_fired_once(database_url, TIMERS)
        fleet.alive()  # neither process died
        assert fleet.exceptions().keys() <= {"ConnectionRefusedError", "OSError"}, (
            fleet.exceptions()
        )
