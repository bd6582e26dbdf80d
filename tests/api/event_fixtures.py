"""Fixtures of the event and link-recipient tests: services with ``event_workflows.py``.

Import them into a test module (``from tests.api.event_fixtures import api, ...``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from httpx_ws.transport import ASGIWebSocketTransport

from taskflow import clock, config
from taskflow.api import app as api_app
from taskflow.service import container
from taskflow.service import principals as principal_service
from taskflow.store import db
from tests.conftest import EXAMPLE_PRINCIPALS

HERE = Path(__file__).resolve().parent


@pytest.fixture
async def event_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Services with the examples and ``event_workflows.py``."""
    with_ours = dataclasses.replace(
        settings, workflows=(*settings.workflows, str(HERE / "event_workflows.py"))
    )
    database = await db.Database.connect(database_url, min_size=1, max_size=10)
    try:
        services = container.build(database, with_ours, frozen_clock)
        people = json.loads(EXAMPLE_PRINCIPALS.read_text())
        for person in people:
            if person["id"] == "app":
                # The example app is granted the examples; here it feeds the tests' workflows.
                person["powers"] = [{"power": "integration"}]
        await principal_service.load(services, people)
        yield services
    finally:
        await database.close()


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
