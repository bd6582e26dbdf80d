"""The mixed-load soak: a real server and two workers under the whole mix, then the books.

Several async clients run every mutation (startRun, claim, claimNext,
release, assign, complete, raiseEvent, updateSubject, move, cancelRun) for
``TASKFLOW_SOAK_SECONDS`` (default 60) against one ``taskflow serve`` process,
many of them on the same few runs and slots (``soak_load.py``), on the
``soak`` workflow whose reminders, breaches and timeouts fall due within
seconds of real time, fired by two ``taskflow worker`` processes. Afterwards,
from the database (``soak_checks.py``): no answer was a 5xx or ``INTERNAL``,
each slot's holder and status agree with its timeline, each timer fired at
most once and every due one fired, and every clock ledger is consistent. The
counts are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow.config import config
from taskflow.service.access import tokens
from tests.acceptance import soak_checks, soak_load
from tests.acceptance.conftest import TASKFLOW, free_port, spawn, stop, stopping, wait_until

pytestmark = pytest.mark.slow

SECONDS = float(os.environ.get("TASKFLOW_SOAK_SECONDS", "60"))
CLIENTS = int(os.environ.get("TASKFLOW_SOAK_CLIENTS", "8"))
POOL = int(os.environ.get("TASKFLOW_SOAK_RUNS", "12"))
KEY = "soak-test-signing-key-0123456789abcdef0123456789"
HERE = Path(__file__).resolve().parent
#: A traceback's last line: the exception's class.
EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout))\b")


class Processes:
    """The server and the workers, their output in files."""

    def __init__(self, url: str, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.env = {
            **os.environ,
            "TASKFLOW_DATABASE_URL": url,
            "TASKFLOW_SECRET_KEYS": KEY,
            "TASKFLOW_DATA_DIR": str(root / "data"),
            "TASKFLOW_PORT": str(self.port),
            "TASKFLOW_ENV": "dev",
            "TASKFLOW_WORKFLOWS": f"{config.PROJECT_ROOT / 'examples'},{HERE / 'soak_workflow.py'}",
        }
        self.running: list[tuple[subprocess.Popen[str], Path]] = []

    def start(self, name: str, *args: str) -> subprocess.Popen[str]:
        log = self.root / f"{name}.log"
        process = spawn([*TASKFLOW, *args], self.env, log)
        self.running.append((process, log))
        return process

    def run(self, *args: str) -> None:
        done = subprocess.run(
            [*TASKFLOW, *args],
            env=self.env,
            cwd=config.PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    def exceptions(self) -> dict[str, int]:
        """The exceptions the processes logged, by class (why an answer was INTERNAL)."""
        found: Counter[str] = Counter()
        for _, log in self.running:
            for line in log.read_text().splitlines():
                match = EXCEPTION.match(line)
                if match:
                    found[f"{log.stem}: {match.group(1)}"] += 1
        return dict(found)

    def output(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()[-5000:]}" for _, log in self.running)

    def alive(self) -> None:
        for process, log in self.running:
            if process.poll() is not None:
                raise AssertionError(f"{log.stem} exited:\n{self.output()}")

    def stop(self) -> None:
        stop([process for process, _ in self.running], grace=15)


@pytest.fixture
def processes(database_url: str, tmp_path: Path) -> Iterator[Processes]:
    with stopping(Processes(database_url, tmp_path)) as running:
        yield running


def _serve(processes: Processes) -> None:
    processes.start("serve", "serve", "--no-with-worker")
    base = f"http://127.0.0.1:{processes.port}"

    def healthy() -> bool:
        processes.alive()
        try:
            return httpx.get(f"{base}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, 60, "taskflow serve to answer /health")


def _workers(processes: Processes, count: int) -> None:
    for i in range(count):
        processes.start(f"worker-{i}", "worker", "--batch", "20")
    for _, log in processes.running[-count:]:
        wait_until(lambda log=log: "worker started" in log.read_text(), 60, "a worker to start")


async def _due_armed(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        found: int = await conn.fetchval(
            "SELECT count(*) FROM timer WHERE status = 'armed' AND due_at <= $1",
            datetime.now(UTC),
        )
        return found
    finally:
        await conn.close()


async def _books(url: str, due_before: datetime) -> tuple[dict[str, list[str]], dict[str, Any]]:
    conn = await asyncpg.connect(url)
    try:
        broken = {
            "slots": await soak_checks.slots_against_timeline(conn),
            "timers": await soak_checks.timers_fired_once(conn, due_before),
            "clocks": await soak_checks.clocks_consistent(conn),
        }
        return broken, await soak_checks.counts(conn)
    finally:
        await conn.close()


def settle(processes: Processes, url: str) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """After the load: the books of ``url`` once the workers fired every timer that fell due
    (the runs settle within seconds: their budgets are seconds), the processes stopped."""
    processes.alive()
    settled = datetime.now(UTC)
    wait_until(
        lambda: processes.alive() or asyncio.run(_due_armed(url)) == 0,
        60,
        f"the workers to fire every due timer\n{processes.output()}",
    )
    processes.stop()
    return asyncio.run(_books(url, settled - timedelta(seconds=1)))


def test_the_whole_mix_under_load_keeps_the_books(
    database_url: str, processes: Processes, tmp_path: Path
) -> None:
    processes.run("principals", "load", "examples/principals.json")
    # The example app and lead are granted the examples; here they run the soak workflow.
    people_file = tmp_path / "soak-principals.json"
    examples = json.loads((config.PROJECT_ROOT / "examples" / "principals.json").read_text())
    grants = {
        soak_load.APP: [{"power": "integration", "workflows": ["soak"]}],
        soak_load.LEAD: [{"power": "lead", "workflows": ["soak"]}],
    }
    people_file.write_text(
        json.dumps([{**p, "powers": grants[p["id"]]} for p in examples if p["id"] in grants])
    )
    processes.run("principals", "load", str(people_file))
    _serve(processes)
    _workers(processes, 2)
    signer = tokens.StaffTokens((KEY,))
    now = datetime.now(UTC)
    people = (*soak_load.FINANCE, soak_load.LEAD, soak_load.APP)
    minted = {who: signer.mint(who, now, timedelta(hours=2)) for who in people}

    tally = asyncio.run(
        soak_load.load(
            f"http://127.0.0.1:{processes.port}",
            minted,
            seconds=SECONDS,
            clients=CLIENTS,
            pool_size=POOL,
        )
    )
    broken, counts = settle(processes, database_url)
    logged = processes.exceptions()

    print(
        json.dumps(
            {
                "seconds": SECONDS,
                "clients": CLIENTS,
                "calls": dict(tally.calls),
                "answers": dict(sorted(tally.answers.items())),
                "http": dict(tally.statuses),
                "errors": dict(tally.errors),
                "error_samples": tally.samples,
                "logged_exceptions": logged,
                "database": counts,
                "broken": {k: v[:5] for k, v in broken.items()},
            },
            indent=2,
            default=str,
        )
    )
    assert sum(tally.calls.values()) > 0
    assert counts["firings"], "no timer fell due during the soak"
    problems = [f"{what}: {len(rows)} broken, e.g. {rows[:3]}" for what, rows in broken.items()]
    problems = [p for p, rows in zip(problems, broken.values(), strict=True) if rows]
    if tally.errors.get("INTERNAL"):
        problems.append(f"{tally.errors['INTERNAL']} INTERNAL errors (logged: {logged})")
    if [s for s in tally.statuses if s >= 500]:
        problems.append(f"5xx answers: {dict(tally.statuses)}")
    if set(tally.errors) - {"INTERNAL"}:
        problems.append(f"unexpected top-level errors: {tally.samples}")
    assert problems == []
