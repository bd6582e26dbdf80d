"""A workspace's requests per minute hold across server processes (docs/workspaces.md,
"Limits"): ``taskflow serve --workers 2`` answers from two processes on one port, and the
workspace's limit admits exactly that many authenticated requests in a minute whichever
process takes them (counted in PostgreSQL, not per process)."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from taskflow.core.workspaces.ids import DEFAULT
from tests.acceptance.conftest import Deployment, stop
from tests.acceptance.test_serve_workers import served_by

pytestmark = pytest.mark.slow

ME = "{ me { login } }"
LIMIT = 6
SENT = 40


def asked(base_url: str, token: str) -> str:
    # A fresh connection each time, so the kernel may hand it to either process.
    with httpx.Client(timeout=10) as http:
        body = http.post(
            f"{base_url}/graphql", json={"query": ME}, headers={"Authorization": f"Bearer {token}"}
        ).json()
    if body.get("errors"):
        return str(body["errors"][0]["extensions"]["code"])
    return "ok"


def test_two_processes_hold_a_workspace_to_its_requests_per_minute(
    deployment: Deployment,
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="taskflow-acceptance-metrics-", dir="/tmp"))
    deployment.env["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    assert deployment.run("principals", "load", "examples/principals.json").returncode == 0
    limited = deployment.run("workspaces", "limits", DEFAULT, "--requests-per-minute", str(LIMIT))
    assert limited.returncode == 0, limited.stderr
    token = deployment.run("token", "ada", "--ttl", "1h").stdout.strip()
    server = deployment.serve("--workers", "2")
    try:
        for _ in range(3):  # a minute's turn during the requests would count two minutes
            minute = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
            with ThreadPoolExecutor(max_workers=8) as pool:
                answers = list(pool.map(asked, [deployment.base_url] * SENT, [token] * SENT))
            if dt.datetime.now(dt.UTC).replace(second=0, microsecond=0) == minute:
                break
        assert answers.count("ok") == LIMIT, answers
        assert answers.count("WORKSPACE_LIMIT_REACHED") == SENT - LIMIT
        assert len(served_by(folder)) == 2  # both processes answered
    finally:
        stop([server], 10)
        shutil.rmtree(folder, ignore_errors=True)
