"""Subscriptions against a real ``taskflow serve`` with a real WebSocket client (docs/live.md)."""

from __future__ import annotations

import contextlib
import json
import signal
import time
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

INBOX = "subscription { inboxChanged { cursor slotId slot { status holder } } }"
START = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename } }"""
INBOX_PAGE = "{ inbox(first: 5) { edges { node { id name } } } }"
CLAIM = """mutation($id: ID!) { claim(input: {slotId: $id}) { __typename } }"""


def _socket(stack: contextlib.ExitStack, deployment: Deployment, token: str) -> ClientConnection:
    socket = stack.enter_context(
        connect(
            f"ws://127.0.0.1:{deployment.port}/graphql",
            subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
            open_timeout=10,
        )
    )
    socket.send(
        json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}})
    )
    assert json.loads(socket.recv(timeout=10))["type"] == "connection_ack"
    socket.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": INBOX}}))
    return socket


def _next(socket: ClientConnection, within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        message: dict[str, Any] = json.loads(
            socket.recv(timeout=max(0.01, deadline - time.monotonic()))
        )
        if message["type"] != "ping":
            return message


def test_a_claim_reaches_the_other_candidate_over_a_real_socket(deployment: Deployment) -> None:
    assert deployment.run("principals", "load", "examples/principals.json").returncode == 0
    tokens = {
        p: deployment.run("token", p, "--ttl", "1h").stdout.strip()
        for p in ("app", "fiona", "frank")
    }
    server = deployment.serve()
    with contextlib.ExitStack() as stack:
        # Closed in reverse: the sockets, then the server (signalled, then waited for).
        stack.callback(server.wait, timeout=30)
        stack.callback(server.send_signal, signal.SIGTERM)
        attributes = {"reference": "EXP-1", "amount": 100.0, "currency": "GBP",
                      "submitted_by": "sam", "department": "sales", "receipts": 1}  # fmt: skip
        subject = {"type": "expense", "externalId": "EXP-1", "attributes": attributes}
        deployment.data(
            tokens["app"], START, input={"workflow": "expense-approval", "subject": subject}
        )
        slot = deployment.data(tokens["frank"], INBOX_PAGE)["inbox"]["edges"][0]["node"]
        frank = _socket(stack, deployment, tokens["frank"])
        fiona = _socket(stack, deployment, tokens["fiona"])
        # The protocol acknowledges no subscription: wait for the process to hold both.
        deadline = time.monotonic() + 10
        while (
            'taskflow_live_subscriptions{field="inbox"} 2.0'
            not in httpx.get(f"{deployment.base_url}/metrics", timeout=5).text
        ):
            assert time.monotonic() < deadline, "the subscriptions were never counted"
            time.sleep(0.05)
        assert (
            deployment.data(tokens["fiona"], CLAIM, id=slot["id"])["claim"]["__typename"]
            == "SlotSuccess"
        )
        # How fast is bench/live.py's to measure; here the change arrives, under any CI load.
        gone = _next(frank, 15.0)["payload"]["data"]["inboxChanged"]
        assert gone["slotId"] == slot["id"]
        assert gone["slot"] is None
        held = _next(fiona, 15.0)["payload"]["data"]["inboxChanged"]
        assert held["slot"] == {"status": "CLAIMED", "holder": "fiona"}
        metrics = httpx.get(f"{deployment.base_url}/metrics", timeout=5).text
        assert "taskflow_live_connections 2.0" in metrics
        assert 'taskflow_live_messages_total{field="inbox"} 2.0' in metrics
        assert "taskflow_live_lag_seconds_count" in metrics
