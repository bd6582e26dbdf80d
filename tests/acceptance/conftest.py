"""Helpers for tests that run taskflow as real processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import psutil
import pytest

from taskflow.config import config

TASKFLOW = [sys.executable, "-m", "taskflow"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_processes(data_dir: Path) -> list[psutil.Process]:
    """Live postgres server processes serving a data dir under ``data_dir``."""
    found = []
    for proc in psutil.process_iter(attrs=["name", "cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if (
            proc.info["name"] == "postgres"
            and str(data_dir) in cmdline
            and proc.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(proc)
    return found


def wait_until(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def worker_env(database_url: str, root: Path, **settings: str) -> dict[str, str]:
    """The environment of a ``taskflow worker`` on ``database_url`` with its data under
    ``root``, plus ``settings`` (``TASKFLOW_WEBHOOK_TIMEOUT="2"``)."""
    return {
        **os.environ,
        "TASKFLOW_DATABASE_URL": database_url,
        "TASKFLOW_SECRET_KEYS": "acceptance-test-signing-key-0123456789abcdef",
        "TASKFLOW_DATA_DIR": str(root / "data"),
        **settings,
    }


def spawn(
    argv: list[str], env: dict[str, str], log: Path, mode: str = "w"
) -> subprocess.Popen[str]:
    """Start ``argv`` in the project root with its output in ``log`` (opened with ``mode``):
    a pipe nobody reads would block the process when full."""
    with log.open(mode) as out:
        return subprocess.Popen(
            argv, env=env, cwd=config.PROJECT_ROOT, stdout=out, stderr=subprocess.STDOUT, text=True
        )


def stop(processes: list[subprocess.Popen[str]], grace: float) -> None:
    """Ask each of ``processes`` still running to end; kill those not ended after ``grace``
    seconds."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()


class Stoppable(Protocol):
    """A group of processes that ``stop()`` ends."""

    def stop(self) -> None: ...


G = TypeVar("G", bound=Stoppable)


@contextlib.contextmanager
def stopping(group: G) -> Iterator[G]:
    """``group``, stopped on leaving the ``with`` whatever happened inside."""
    try:
        yield group
    finally:
        group.stop()


def graphql_data(base_url: str, token: str, query: str, **variables: Any) -> dict[str, Any]:
    """The ``data`` of a GraphQL request to ``base_url`` as ``token``, which must answer
    without errors."""
    response = httpx.post(
        f"{base_url}/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    body = response.json()
    assert not body.get("errors"), body
    return dict(body["data"])


class Deployment:
    """One taskflow installation: a data dir, a port, and the commands to run it."""

    def __init__(self, root: Path) -> None:
        self.data_dir = root / "data"
        self.log = root / "serve.log"
        self.port = free_port()
        self.env = {
            **os.environ,
            "TASKFLOW_DATA_DIR": str(self.data_dir),
            "TASKFLOW_PORT": str(self.port),
            "TASKFLOW_ENV": "dev",
        }
        for name in ("TASKFLOW_DATABASE_URL", "TASKFLOW_SECRET_KEYS"):
            self.env.pop(name, None)
        self.base_url = f"http://127.0.0.1:{self.port}"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TASKFLOW, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=config.PROJECT_ROOT,
            check=False,
        )

    def run_with(self, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        """:meth:`run` with ``env`` added to the deployment's environment."""
        saved = dict(self.env)
        self.env.update(env)
        try:
            return self.run(*args)
        finally:
            self.env = saved

    def serve(self, *options: str) -> subprocess.Popen[str]:
        return self.healthy(spawn([*TASKFLOW, "serve", *options], self.env, self.log, "a"))

    def healthy(
        self, process: subprocess.Popen[str], what: str = "taskflow serve"
    ) -> subprocess.Popen[str]:
        """``process`` once it answers /health here (it fails if the process exits)."""

        def answers() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"{what} exited:\n{self.log.read_text()}")
            try:
                return httpx.get(f"{self.base_url}/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, 60, f"{what} to answer /health")
        return process

    def data(self, token: str, query: str, **variables: Any) -> dict[str, Any]:
        """The ``data`` of a GraphQL request as ``token``, which must answer without errors."""
        return graphql_data(self.base_url, token, query, **variables)

    def graphql(self, query: str, token: str | None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(
            f"{self.base_url}/graphql", json={"query": query}, headers=headers, timeout=10
        )


@pytest.fixture
def deployment() -> Iterator[Deployment]:
    # Not pytest's tmp_path: pytest resets its root to mode 0700 whenever a session starts,
    # which would lock out the unprivileged user the embedded PostgreSQL runs as.
    root = Path(tempfile.mkdtemp(prefix="taskflow-acceptance-", dir="/tmp"))
    deployment = Deployment(root)
    yield deployment
    # Whatever a test did, leave no server behind.
    for proc in postgres_processes(deployment.data_dir):
        proc.kill()
    shutil.rmtree(root, ignore_errors=True)
