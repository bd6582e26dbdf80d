"""The harness of ``test_steps_blackbox.py``: a real ``taskflow serve`` (no in-process
worker) and two ``taskflow worker`` processes on one database, serving the workflow file
``blackbox_workflows.py`` copied to a temporary folder, driven over HTTP GraphQL only."""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from taskflow.config import config
from tests.acceptance.conftest import Deployment, wait_until
from tests.acceptance.test_workers import Workers
from tests.conftest import example_people

HERE = Path(__file__).parent
EXAMPLES = config.PROJECT_ROOT / "examples"
SECRET = "acceptance-test-signing-key-0123456789abcdef"

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on StartRunSuccess { run { id } } ... on Refusal { code message } } }"""
RUN = """query($id: ID!) { run(id: $id) {
  state status
  slots { name label status }
  timers { kind state fired }
  steps { id kind state action status attemptCount result lastError
    attempts { attempt worker outcome startedAt finishedAt durationMs errorClass errorMessage } }
  timeline(first: 100) { edges { node { kind details at } } } } }"""
ATTENTION = """{ needsAttention(first: 50, filter: {reasons: [STEP_PARKED]}) {
  edges { node { reason runId workflow state detail } } } }"""
UNMATCHED = """{ needsAttention(first: 50, filter: {reasons: [ROUTE_UNMATCHED]}) {
  edges { node { reason runId workflow state detail } } } }"""
GOTO = """mutation($id: ID!, $state: String!) {
  goto(input: {runId: $id, state: $state, reason: "answered by phone"}) {
  __typename ... on Refusal { code message } } }"""
RETRY = """mutation($id: ID!) { retryStep(input: {stepId: $id}) {
  __typename ... on RetryStepSuccess { step { status attemptCount } }
  ... on Refusal { code message } } }"""


class Box:
    """A server and its workers on one database, and the tokens of an app and an admin."""

    def __init__(self, database_url: str, root: Path) -> None:
        self.root = root
        folder = root / "workflows"
        folder.mkdir()
        shutil.copy(HERE / "blackbox_workflows.py", folder / "billing_box.py")
        self.deployment = Deployment(root)
        self.base_url = self.deployment.base_url
        self.workers = Workers(database_url, root)
        (root / "metrics").mkdir()
        ours = {
            "TASKFLOW_WORKFLOWS": f"{EXAMPLES},{folder / 'billing_box.py'}",
            "TASKFLOW_SECRET_KEYS": SECRET,
            # The workers' counters, scraped from the server (prometheus-client multiprocess).
            "PROMETHEUS_MULTIPROC_DIR": str(root / "metrics"),
        }
        self.workers.env.update(ours)
        self.deployment.env.update({**ours, "TASKFLOW_DATABASE_URL": database_url})
        self.server: subprocess.Popen[str] | None = None
        self.app = self.admin = ""

    def cli(self, *args: str) -> str:
        done = self.deployment.run(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def start(self) -> None:
        people = self.root / "people.json"
        people.write_text(json.dumps(example_people(app_everywhere=True)))
        self.cli("principals", "load", str(people))
        self.app = self.cli("token", "app", "--ttl", "1h")
        self.admin = self.cli("token", "ada", "--ttl", "1h")
        self.server = self.deployment.serve("--no-with-worker")
        self.workers.start(2, "--poll", "0.2")

    def stop(self) -> None:
        processes = [*self.workers.processes, *([self.server] if self.server else [])]
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def post(self, token: str, query: str, variables: dict[str, Any] | None = None) -> Any:
        response = httpx.post(
            f"{self.base_url}/graphql",
            json={"query": query, "variables": variables or {}},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        body = response.json()
        assert not body.get("errors"), body
        return body["data"]

    def start_run(self, workflow: str, ref: str, **attributes: Any) -> str:
        folder = self.root / ref
        folder.mkdir()
        subject = {"type": "order", "externalId": ref}
        subject["attributes"] = {"ref": ref, "dir": str(folder), **attributes}
        data = self.post(self.app, START, {"input": {"workflow": workflow, "subject": subject}})
        assert data["startRun"]["__typename"] == "StartRunSuccess", data
        return str(data["startRun"]["run"]["id"])

    def run(self, run_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.post(self.admin, RUN, {"id": run_id})["run"]
        return found

    def until(self, run_id: str, holds: Callable[[dict[str, Any]], bool], what: str) -> Any:
        """Poll the run until ``holds`` (at most 60 s); the last view read."""
        seen: dict[str, Any] = {}

        def check() -> bool:
            for process in self.workers.processes:
                assert process.poll() is None, f"a worker exited:\n{self.workers.output()}"
            seen.update(self.run(run_id))
            return holds(seen)

        try:
            wait_until(check, 60, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; last seen {json.dumps(seen)[:3000]}") from None
        return seen

    def metrics(self, name: str) -> dict[str, float]:
        """The samples of ``name`` on the server's ``/metrics``, by their label text."""
        text = httpx.get(f"{self.base_url}/metrics", timeout=10).text
        found = {}
        for line in text.splitlines():
            if line.startswith(name + "{"):
                labels, _, value = line[len(name) :].rpartition(" ")
                found[labels] = float(value)
        return found

    def folder(self, ref: str) -> Path:
        return self.root / ref


@contextlib.contextmanager
def running(database_url: str, root: Path) -> Iterator[Box]:
    """A started box, stopped on the way out (the tests' ``box`` fixtures)."""
    box = Box(database_url, root)
    try:
        box.start()
        yield box
    finally:
        box.stop()


def kinds(view: dict[str, Any]) -> list[str]:
    return [e["node"]["kind"] for e in view["timeline"]["edges"]]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def gaps(step: dict[str, Any]) -> list[float]:
    """Seconds between one attempt's end and the next one's start."""
    tries = sorted(step["attempts"], key=lambda a: a["attempt"])
    return [
        (at(b["startedAt"]) - at(a["finishedAt"])).total_seconds()
        for a, b in itertools.pairwise(tries)
    ]


def assert_waits(view: dict[str, Any], step: dict[str, Any], seconds: list[int]) -> None:
    """The step's retry policy planned these waits between attempts, and no attempt came early.

    The plan is exact: each ``step.retrying`` line is decided at ``at`` and schedules the next
    attempt at ``details.next_at``. The waits observed (one attempt's end to the next one's start)
    may only be longer: a worker under load picks a due step up late, so they bound from below."""
    planned = [
        (at(node["details"]["next_at"]) - at(node["at"])).total_seconds()
        for node in (e["node"] for e in view["timeline"]["edges"])
        if node["kind"] == "step.retrying"
    ]
    assert [round(wait) for wait in planned] == seconds, planned
    seen = gaps(step)
    assert all(s >= p - 0.1 for s, p in zip(seen, planned, strict=True)), (seen, planned)


def settled(state: str) -> Callable[[dict[str, Any]], bool]:
    return lambda view: view["state"] == state
