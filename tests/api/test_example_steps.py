"""The examples' automatic steps through the API with the worker's pass.

Expense approval's payment step, with a small local payments receiver: paid at once; a
service that fails once, retried with backoff and paid with the same idempotency key; a
refusal routed to accounts payable. Support ticket's weekly follow-ups while the customer
is silent, four of them, then the ticket closes."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from taskflow.config import config
from taskflow.service.steps import steps
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import gql

pytestmark = pytest.mark.anyio

RUN_STEPS = (config.PROJECT_ROOT / "graphql" / "operations" / "run_steps.graphql").read_text()


class Receiver:
    """A payments service on a free local port: answers each POST with the next scripted
    status (the last one repeats) and records what it was sent."""

    def __init__(self) -> None:
        self.script: list[int] = [201]
        self.calls: list[tuple[str, dict[str, Any]]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                receiver.calls.append((self.headers.get("Idempotency-Key") or "", body))
                status = receiver.script[min(len(receiver.calls), len(receiver.script)) - 1]
                answer = {"payment_reference": f"PAY-API-{len(receiver.calls)}"}
                data = json.dumps(answer if status < 300 else {"error": "no"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/payments"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def settings(settings: config.Settings, receiver: Receiver) -> config.Settings:
    return dataclasses.replace(settings, payments_url=receiver.url)


async def _approved(client: httpx.AsyncClient, people: dict[str, str], ref: str) -> str:
    """A small claim paid by the payments service, approved by finance: its run's id."""
    started = await w.start_expense(client, people["app"], ref, amount=40, payout="api")
    review = await w.slot_named(client, people["frank"], "finance_review")
    done = await w.complete(client, people["frank"], review["id"], {"decision": "approve"})
    assert done["run"]["state"] == "paying"  # waits for the worker
    return str(started["run"]["id"])


async def _steps(client: httpx.AsyncClient, token: str, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(client, RUN_STEPS, {"id": run_id}, token=token)).ok()["run"]
    return found


async def test_the_payment_step_pays_at_once(world: World, receiver: Receiver) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    run_id = await _approved(client, people, "EXP-API-1")
    await steps.run_due(services, frozen_clock.now())
    run = await _steps(client, people["leah"], run_id)
    assert (run["state"], run["status"]) == ("paid", "COMPLETED")
    [step] = run["steps"]
    assert step["result"] == {"payment_reference": "PAY-API-1", "status": "paid"}
    [(key, body)] = receiver.calls
    assert key.endswith(":step")  # the step's own key: <run>:<visit>:step
    assert body == {"reference": "EXP-API-1", "amount": 40, "currency": "GBP", "payee": "sam"}


async def test_a_failing_payments_service_is_retried_with_backoff_then_pays_once(
    world: World, receiver: Receiver
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    receiver.script = [503, 201]
    run_id = await _approved(client, people, "EXP-API-2")
    await steps.run_due(services, frozen_clock.now())
    run = await _steps(client, people["leah"], run_id)
    [step] = run["steps"]
    assert (run["state"], step["status"]) == ("paying", "DUE")
    assert step["attempts"][0]["errorClass"] == "PaymentUnavailable"
    frozen_clock.advance(timedelta(seconds=37))  # 30 s, plus at most 20 % jitter
    await steps.run_due(services, frozen_clock.now())
    run = await _steps(client, people["leah"], run_id)
    assert (run["state"], run["status"]) == ("paid", "COMPLETED")
    assert len(receiver.calls) == 2
    assert receiver.calls[0][0] == receiver.calls[1][0]  # one idempotency key for both


async def test_a_refused_payment_goes_to_accounts_payable(world: World, receiver: Receiver) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    receiver.script = [422]
    run_id = await _approved(client, people, "EXP-API-3")
    await steps.run_due(services, frozen_clock.now())
    run = await _steps(client, people["leah"], run_id)
    assert run["state"] == "payment"
    [step] = run["steps"]
    assert (step["status"], step["attemptCount"]) == ("FAILED", 1)  # final: not retried
    assert step["attempts"][0]["errorClass"] == "PaymentRefused"
    paid = await w.pay(client, people)
    assert paid["run"] == {"state": "paid", "status": "COMPLETED"}


MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename
  ... on Refusal { code message } } }"""


async def test_a_silent_customer_gets_four_weekly_follow_ups_then_the_ticket_closes(
    world: World,
) -> None:
    client, people, services, frozen_clock = world.client, world.people, world.services, world.clock
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-F", w.TICKET)
    run_id = started["run"]["id"]
    triage = await w.slot_named(client, people["tess"], "triage")
    await w.claim(client, people["tess"], triage["id"])
    await w.complete(client, people["tess"], triage["id"], {"priority": "P3", "category": "bug"})
    first = await w.slot_named(client, people["sasha"], "first_response")
    await w.claim(client, people["sasha"], first["id"])
    asked = await gql(
        client,
        MOVE,
        {"input": {"runId": run_id, "move": "ask_customer", "input": {"question": "Which?"}}},
        token=people["sasha"],
    )
    assert asked.ok()["move"]["__typename"] == "RunSuccess"
    entered = frozen_clock.now()
    for week in range(1, 5):
        frozen_clock.set(entered + timedelta(days=7 * week))
        await steps.run_due(services, frozen_clock.now())
        run = await _steps(client, people["ada"], run_id)
        assert run["state"] == "waiting_for_customer"
        follow_ups = [s for s in run["steps"] if s["kind"] == "every"]
        assert [s["status"] for s in follow_ups] == ["SUCCEEDED"] * week
    frozen_clock.set(entered + timedelta(days=29))
    await steps.run_due(services, frozen_clock.now())
    run = await _steps(client, people["ada"], run_id)
    assert (run["state"], len(run["steps"])) == ("closed", 4)
