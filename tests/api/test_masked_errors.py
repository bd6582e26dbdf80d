"""An engine bug inside a mutation is no refusal: it is masked, with the request id, and logged.

Today's main answered it as ``InvalidInput`` (INVALID_INPUT) with the engine's own message.
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from taskflow.service.common import container
from tests.conftest import app_with, tokens_for

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.anyio

START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename
  ... on Refusal { code message }
} }"""


broken_services, api, tokens = app_with("broken_services", HERE / "broken_workflows.py")


async def test_an_engine_error_reaches_the_client_masked_with_the_request_id(
    api: httpx.AsyncClient, broken_services: container.Services, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    token = tokens_for(broken_services)["app"]
    variables = {
        "input": {
            "workflow": "broken-hook",
            "subject": {"type": "gadget", "externalId": "g-1", "attributes": {}},
        }
    }
    response = await api.post(
        "/graphql",
        json={"query": START, "variables": variables},
        headers={"Authorization": f"Bearer {token}", "X-Request-Id": "req-engine-bug-1"},
    )
    body = response.json()
    assert body["data"] is None or body["data"]["startRun"] is None, body
    (error,) = body["errors"]
    assert error["extensions"] == {"code": "INTERNAL", "requestId": "req-engine-bug-1"}
    assert "req-engine-bug-1" in error["message"]
    # Nothing of the engine's message (the workflow's internals) reaches the client.
    assert "hook" not in error["message"]
    assert "divided" not in error["message"]
    logged = [r for r in caplog.records if r.name == "taskflow.api" and r.levelno >= logging.ERROR]
    assert any("req-engine-bug-1" in r.getMessage() for r in logged), caplog.text
    assert any(r.exc_info and "divided by zero" in str(r.exc_info[1]) for r in logged)
