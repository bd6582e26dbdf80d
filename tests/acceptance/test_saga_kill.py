"""A saga's compensations with the workers SIGKILLed mid-way (docs/composition.md, "Sagas"):
the ``employee-onboarding`` example on a real ``taskflow serve`` and real ``taskflow worker``
processes, driven over HTTP GraphQL only.

A hire with the laptop and accounts done is withdrawn while no worker runs, so the
compensations are planned rows only the database knows; a worker is started and SIGKILLed
as soon as it has started them; one compensation then ends with every worker dead, so only
its ``run_child`` row knows the saga must note it. Fresh workers finish the saga: each done
step is undone by exactly one compensation run, started once and noted once, and the
still-running badge step is cancelled.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance import blackbox_harness as harness
from tests.acceptance.blackbox_harness import START, Box, kinds
from tests.acceptance.conftest import wait_until

RUN = """query($id: ID!) { run(id: $id) {
  state status
  children { label status run { id status } }
  compensations { step compensation status attempts run { id state status } }
  timeline(first: 100) { edges { node { kind details } } } } }"""
INBOX = """{ inbox(first: 50) { edges { node { id name subject { externalId } } } } }"""
COMPLETE = """mutation($id: ID!, $payload: JSON!) {
  complete(input: {slotId: $id, payload: $payload}) { __typename } }"""
MOVE = """mutation($input: MoveInput!) { move(input: $input) {
  __typename ... on RunSuccess { run { state status } } ... on Refusal { code message } } }"""
HIRE = {"name": "Grace Hopper", "email": "grace@example.com", "start_date": "2027-01-04"}


@pytest.fixture
def box(database_url: str, tmp_path: Path) -> Iterator[Box]:
    with harness.running(database_url, tmp_path) as started:
        yield started


def view(box: Box, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = box.post(box.admin, RUN, {"id": run_id})["run"]
    return found


def until(box: Box, run_id: str, holds: Any, what: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def check() -> bool:
        seen.update(view(box, run_id))
        return bool(holds(seen))

    wait_until(check, 60, f"{what}; last seen {seen}\n{box.workers.output()}")
    return seen


def do(box: Box, person: str, slot: str, hire: str) -> None:
    """``person`` completes the slot ``slot`` of ``hire`` from their inbox."""
    token = box.cli("token", person, "--ttl", "1h")

    def mine() -> list[dict[str, Any]]:
        edges = box.post(token, INBOX)["inbox"]["edges"]
        return [
            e["node"]
            for e in edges
            if e["node"]["name"] == slot and e["node"]["subject"]["externalId"] == hire
        ]

    wait_until(lambda: len(mine()) == 1, 30, f"{slot} in {person}'s inbox")
    [found] = mine()
    done = box.post(token, COMPLETE, {"id": found["id"], "payload": {"reference": slot}})
    assert done["complete"]["__typename"] == "CompleteSuccess", done


def kill_workers(box: Box) -> None:
    for process in box.workers.processes:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    box.workers.processes.clear()


def steps_of(seen: dict[str, Any]) -> dict[str, str]:
    return {c["label"]: c["status"] for c in seen["children"]}


@pytest.mark.slow
def test_workers_killed_mid_compensation_each_step_is_undone_once(box: Box) -> None:
    subject = {"type": "hire", "externalId": "K-1", "attributes": HIRE}
    data = box.post(
        box.app, START, {"input": {"workflow": "employee-onboarding", "subject": subject}}
    )
    assert data["startRun"]["__typename"] == "StartRunSuccess", data
    run_id = data["startRun"]["run"]["id"]
    until(box, run_id, lambda v: len(v["children"]) == 3, "the three steps to start")
    do(box, "ivan", "ship_laptop", "K-1")
    do(box, "ivan", "open_accounts", "K-1")
    done = until(
        box,
        run_id,
        lambda v: steps_of(v) == {"laptop": "SETTLED", "accounts": "SETTLED", "badge": "LIVE"},
        "the laptop and accounts steps to be read back",
    )
    assert done["state"] != "withdrawn"

    # No worker: the withdraw plans the compensations as rows only the database knows.
    kill_workers(box)
    hana = box.cli("token", "hana", "--ttl", "1h")
    moved = box.post(hana, MOVE, {"input": {"runId": run_id, "move": "withdraw"}})["move"]
    assert moved["run"] == {"state": "withdrawn", "status": "COMPLETED"}, moved
    planned = view(box, run_id)
    assert [(c["step"], c["status"]) for c in planned["compensations"]] == [
        ("accounts", "STARTING"),
        ("laptop", "STARTING"),
    ]

    # A worker starts the compensations and is SIGKILLed as soon as one is under way.
    box.workers.start(1, "--poll", "0.2")
    until(
        box,
        run_id,
        lambda v: any(c["status"] == "LIVE" for c in v["compensations"]),
        "a compensation to start",
    )
    kill_workers(box)

    # Every worker dead: the laptop comes back; only its run_child row knows it.
    live = [c["step"] for c in view(box, run_id)["compensations"] if c["status"] == "LIVE"]
    if "laptop" in live:
        do(box, "ivan", "collect_laptop", "K-1")
        returned = view(box, run_id)["compensations"]
        assert [c["status"] for c in returned if c["step"] == "laptop"] == ["ENDED"]

    box.workers.start(2, "--poll", "0.2")
    if "laptop" not in live:
        do(box, "ivan", "collect_laptop", "K-1")
    do(box, "ivan", "close_accounts", "K-1")
    seen = until(
        box,
        run_id,
        lambda v: (
            [c["status"] for c in v["compensations"]] == ["SETTLED", "SETTLED"]
            and steps_of(v)["badge"] != "LIVE"
        ),
        "fresh workers to finish the saga",
    )
    assert [(c["step"], c["compensation"], c["attempts"]) for c in seen["compensations"]] == [
        ("accounts", "accounts-closure", 1),
        ("laptop", "laptop-return", 1),
    ]
    assert [c["run"]["state"] for c in seen["compensations"]] == ["closed", "returned"]
    assert kinds(seen).count("run.compensating") == 2  # each started once
    assert kinds(seen).count("run.compensated") == 2  # each noted once
    assert "run.compensation_failed" not in kinds(seen)
    badge = next(c for c in seen["children"] if c["label"] == "badge")
    assert view(box, badge["run"]["id"])["status"] == "CANCELLED"
    ivan = box.cli("token", "ivan", "--ttl", "1h")
    left = [e["node"]["name"] for e in box.post(ivan, INBOX)["inbox"]["edges"]]
    assert "collect_laptop" not in left
    assert "close_accounts" not in left
