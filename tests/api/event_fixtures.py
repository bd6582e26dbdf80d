"""Fixtures of the event and link-recipient tests: services with ``event_workflows.py``.

Import them into a test module (``from tests.api.event_fixtures import api, ...``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow import clock, config
from taskflow.api import app as api_app
from taskflow.service import container
from tests.conftest import EXAMPLE_PRINCIPALS, services_with

HERE = Path(__file__).resolve().parent


@pytest.fixture
async def event_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Services with the examples and ``event_workflows.py``."""
    async with services_with(
        database_url, settings, frozen_clock, HERE / "event_workflows.py"
    ) as services:
        yield services


@pytest.fixture
async def api(event_services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    transport = ASGIWebSocketTransport(api_app.create_app(services=event_services))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        yield http


@pytest.fixture
def tokens(event_services: container.Services) -> dict[str, str]:
    records = json.loads(EXAMPLE_PRINCIPALS.read_text())
    now = event_services.clock.now()
    return {r["id"]: event_services.staff_tokens.mint(r["id"], now) for r in records}
