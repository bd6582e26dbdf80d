"""Child runs as an outside client sees them: parent and child workflows of our own (written
to a temporary folder), a real ``taskflow serve`` and real ``taskflow worker`` processes on
one database, driven over HTTP GraphQL only.

Covered: a child started by a worker and linked both ways; every worker killed (SIGKILL)
after the child started and the child then ending, so nothing but the ``run_child`` row
knows the parent must move: new workers resume it, once; a child that ends inside a
worker (its timeout fires) failing with a kind its parent catches; and a parent cancelled
over HTTP whose live child the workers cancel, naming the cause.
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from taskflow.config import config
from tests.acceptance.blackbox_harness import START, Box, kinds, settled
from tests.acceptance.conftest import wait_until

RUN = """query($id: ID!) { run(id: $id) {
  state status
  parent { id }
  children { label status outcome run { id state status } }
  timeline(first: 100) { edges { node { kind reason details } } } } }"""
INBOX = """{ inbox(first: 50) { edges { node { id name subject { externalId } } } } }"""
COMPLETE = """mutation($id: ID!, $payload: JSON!) {
  complete(input: {slotId: $id, payload: $payload}) { __typename } }"""
CANCEL = """mutation($id: ID!) { cancelRun(input: {runId: $id, reason: "order withdrawn"}) {
  __typename } }"""


@pytest.fixture
def box(database_url: str, tmp_path: Path) -> Iterator[Box]:
    running = Box(database_url, tmp_path)
    ours = tmp_path / "workflows" / "compose_box.py"
    shutil.copy(config.PROJECT_ROOT / "tests" / "api" / "compose_workflows.py", ours)
    for env in (running.workers.env, running.deployment.env):
        env["TASKFLOW_WORKFLOWS"] += f",{ours}"
    try:
        running.start()
        yield running
    finally:
        running.stop()


def start(box: Box, workflow: str, doc: str) -> str:
    """Start ``workflow`` on document ``doc`` as the example app."""
    subject = {"type": "doc", "externalId": doc, "attributes": {"title": doc}}
    data = box.post(box.app, START, {"input": {"workflow": workflow, "subject": subject}})
    assert data["startRun"]["__typename"] == "StartRunSuccess", data
    return str(data["startRun"]["run"]["id"])


def view(box: Box, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = box.post(box.admin, RUN, {"id": run_id})["run"]
    return found


def until(box: Box, run_id: str, holds: Callable[[dict[str, Any]], bool], what: str) -> Any:
    """Poll the run (this module's view of it) until ``holds``, at most 60 s."""
    seen: dict[str, Any] = {}

    def check() -> bool:
        seen.update(view(box, run_id))
        return holds(seen)

    wait_until(check, 60, f"{what}\n{box.workers.output()}")
    return seen


def labelled(seen: dict[str, Any], label: str) -> Any:
    return next(c for c in seen["children"] if c["label"] == label)


def child_live(label: str) -> Any:
    return lambda v: any(c["label"] == label and c["status"] == "LIVE" for c in v["children"])


@pytest.mark.slow
def test_child_runs_black_box(box: Box) -> None:
    parent = start(box, "compose-parent", "P-1")
    seen = until(box, parent, child_live("review"), "a worker to start the child")
    child = labelled(seen, "review")["run"]["id"]
    assert box.post(box.admin, RUN, {"id": child})["run"]["parent"] == {"id": parent}

    # Every worker killed: the child's end is now something only the database knows.
    for process in box.workers.processes:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    box.workers.processes.clear()
    fiona = box.cli("token", "fiona", "--ttl", "1h")
    [slot] = [
        e["node"]
        for e in box.post(fiona, INBOX)["inbox"]["edges"]
        if e["node"]["name"] == "review" and e["node"]["subject"]["externalId"] == "P-1"
    ]
    done = box.post(fiona, COMPLETE, {"id": slot["id"], "payload": {"score": 9}})
    assert done["complete"]["__typename"] == "CompleteSuccess"
    waiting = view(box, parent)
    assert (waiting["state"], labelled(waiting, "review")["status"]) == ("waiting", "ENDED")

    box.workers.start(2, "--poll", "0.2")  # fresh workers find the row and resume once
    seen = until(box, parent, settled("good"), "new workers to resume the parent")
    assert kinds(seen).count("child.ended") == 1
    assert labelled(seen, "review")["outcome"]["result"] == {"score": 9}

    # A child that ends inside a worker (its timeout fires): caught by its kind.
    late = start(box, "compose-late", "L-1")
    seen = until(box, late, settled("late"), "the child's timeout to be caught")
    assert seen["children"][0]["outcome"]["failure"] == "expired"
    assert "child.caught" in kinds(seen)

    # A parent cancelled over HTTP: the workers cancel its live child, naming the cause.
    doomed = start(box, "compose-parent", "C-1")
    seen = until(box, doomed, child_live("review"), "the child to start")
    child = labelled(seen, "review")["run"]["id"]
    assert box.post(box.admin, CANCEL, {"id": doomed})["cancelRun"]["__typename"] == "RunSuccess"
    ended = until(box, child, lambda v: v["status"] == "CANCELLED", "the child to be cancelled")
    [line] = [e["node"] for e in ended["timeline"]["edges"] if e["node"]["kind"] == "run.cancelled"]
    assert "its parent run" in line["reason"]
    assert "order withdrawn" in line["reason"]
