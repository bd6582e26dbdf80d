"""Resuming a subscription on another API process (docs/live.md, "Resume").

Two real ``taskflow serve`` processes on one database. Frank subscribes to his inbox on
A and keeps the cursor of the last change; A is killed outright; while he is away two of
his slots are claimed by Fiona and a new one arrives (through B). He reconnects to B with
his cursor: each of those three changes comes once, then B's live changes follow, with
nothing told twice. A cursor older than the window is refused with CURSOR_EXPIRED.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from taskflow.service.access import tokens
from tests.acceptance.conftest import free_port, graphql_data, stopping, wait_until
from tests.acceptance.test_soak import KEY, Processes

pytestmark = pytest.mark.slow

INBOX = """subscription($after: String) {
  inboxChanged(after: $after) { cursor slotId slot { status holder } } }"""
START = "mutation($input: StartRunInput!) { startRun(input: $input) { __typename } }"
INBOX_PAGE = "{ inbox(first: 20) { edges { node { id subject { externalId } } } } }"
CLAIM = "mutation($id: ID!) { claim(input: {slotId: $id}) { __typename } }"


class Two(Processes):
    """Two API processes on one database, each on its own port."""

    def __init__(self, url: str, root: Path) -> None:
        super().__init__(url, root)
        self.env["TASKFLOW_LIVE_RESUME_WINDOW"] = "50"
        self.ports: dict[str, int] = {}

    def serve(self, name: str) -> None:
        port = self.ports[name] = free_port()
        self.start(name, "serve", "--no-with-worker", "--port", str(port))
        wait_until(lambda: self._healthy(port), 90, f"{name} on {port} to answer /health")

    def _healthy(self, port: int) -> bool:
        self.alive()
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self, name: str) -> None:
        process = next(p for p, log in self.running if log.stem == name)
        process.kill()
        process.wait(timeout=10)
        self.running = [(p, log) for p, log in self.running if p is not process]

    def data(self, name: str, token: str, query: str, **variables: Any) -> dict[str, Any]:
        return graphql_data(f"http://127.0.0.1:{self.ports[name]}", token, query, **variables)

    def subscriptions(self, name: str) -> str:
        return httpx.get(f"http://127.0.0.1:{self.ports[name]}/metrics", timeout=5).text


@pytest.fixture
def two(database_url: str, tmp_path: Path) -> Iterator[Two]:
    with stopping(Two(database_url, tmp_path)) as running:
        running.run("principals", "load", "examples/principals.json")
        running.serve("a")
        running.serve("b")
        yield running


def _start(two: Two, on: str, token: str, reference: str) -> None:
    attributes = {"reference": reference, "amount": 100.0, "currency": "GBP",
                  "submitted_by": "sam", "department": "sales", "receipts": 1}  # fmt: skip
    subject = {"type": "expense", "externalId": reference, "attributes": attributes}
    started = two.data(on, token, START, input={"workflow": "expense-approval", "subject": subject})
    assert started["startRun"]["__typename"] == "StartRunSuccess"


def _slots(two: Two, on: str, token: str) -> dict[str, str]:
    edges = two.data(on, token, INBOX_PAGE)["inbox"]["edges"]
    return {e["node"]["subject"]["externalId"]: e["node"]["id"] for e in edges}


def _claim(two: Two, on: str, token: str, slot: str) -> None:
    assert two.data(on, token, CLAIM, id=slot)["claim"]["__typename"] == "SlotSuccess"


@contextlib.contextmanager
def _inbox(two: Two, on: str, token: str, after: str | None) -> Iterator[ClientConnection]:
    with connect(
        f"ws://127.0.0.1:{two.ports[on]}/graphql",
        subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
        open_timeout=10,
    ) as socket:
        init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}
        socket.send(json.dumps(init))
        assert json.loads(socket.recv(timeout=10))["type"] == "connection_ack"
        payload = {"query": INBOX, "variables": {"after": after}}
        socket.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
        yield socket


def _messages(socket: ClientConnection, count: int) -> list[dict[str, Any]]:
    """The messages (but pings) that arrive: waits up to 30 s for ``count`` of them (a loaded
    machine delivers late, not never), then 1 s more for any extra one (a duplicate)."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = json.loads(socket.recv(timeout=left))
        except TimeoutError:
            break
        if message["type"] != "ping":
            found.append(message)
            if len(found) == count:
                deadline = min(deadline, time.monotonic() + 1.0)
    return found


def _subscribed(two: Two, on: str) -> None:
    wait_until(
        lambda: 'taskflow_live_subscriptions{field="inbox"} 1.0' in two.subscriptions(on),
        10,
        f"{on} to hold the subscription",
    )


def test_a_cursor_from_one_process_resumes_on_another_missing_nothing(two: Two) -> None:
    signer = tokens.StaffTokens((KEY,))
    now = datetime.now(UTC)
    app, fiona, frank = (signer.mint(p, now, timedelta(hours=1)) for p in ("app", "fiona", "frank"))
    for reference in ("EXP-R1", "EXP-R2", "EXP-R3", "EXP-R4"):
        _start(two, "a", app, reference)
    slots = _slots(two, "a", frank)

    with _inbox(two, "a", frank, None) as socket:
        _subscribed(two, "a")
        _claim(two, "a", fiona, slots["EXP-R1"])
        (seen,) = _messages(socket, 1)
        cursor = seen["payload"]["data"]["inboxChanged"]["cursor"]
        assert seen["payload"]["data"]["inboxChanged"]["slotId"] == slots["EXP-R1"]
        two.kill("a")

    # Away (A is gone): two slots claimed by Fiona, a new expense arrives.
    _claim(two, "b", fiona, slots["EXP-R2"])
    _claim(two, "b", fiona, slots["EXP-R3"])
    _start(two, "b", app, "EXP-R5")
    new = _slots(two, "b", frank)["EXP-R5"]

    with _inbox(two, "b", frank, cursor) as socket:
        missed = [m["payload"]["data"]["inboxChanged"] for m in _messages(socket, 3)]
        _subscribed(two, "b")
        _claim(two, "b", fiona, slots["EXP-R4"])
        live = [m["payload"]["data"]["inboxChanged"] for m in _messages(socket, 1)]

    opened = {"status": "OPEN", "holder": None}
    assert {m["slotId"]: m["slot"] for m in missed} == {
        slots["EXP-R2"]: None,
        slots["EXP-R3"]: None,
        new: opened,
    }
    assert len(missed) == 3
    assert [(m["slotId"], m["slot"]) for m in live] == [(slots["EXP-R4"], None)]
    cursors = [int(m["cursor"]) for m in (*missed, *live)]
    assert min(cursors) >= int(cursor)
    assert cursors == sorted(cursors)


def test_a_cursor_past_the_window_is_refused_with_cursor_expired(two: Two) -> None:
    signer = tokens.StaffTokens((KEY,))
    now = datetime.now(UTC)
    app, frank = (signer.mint(p, now, timedelta(hours=1)) for p in ("app", "frank"))
    # The window is 50 lines: a start writes several, so 20 starts are well past it.
    for i in range(20):
        _start(two, "b", app, f"EXP-W{i}")
    with _inbox(two, "b", frank, "1") as socket:
        (refused,) = _messages(socket, 1)
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "CURSOR_EXPIRED"
    assert "read the list again" in refused["payload"][0]["message"]
