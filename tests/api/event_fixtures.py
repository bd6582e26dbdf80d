"""Fixtures of the event and link-recipient tests: services with ``event_workflows.py``.

Import them into a test module (``from tests.api.event_fixtures import api, ...``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from taskflow.service import container
from tests.conftest import asgi_client, services_fixture, tokens_for

HERE = Path(__file__).resolve().parent


event_services = services_fixture(
    "event_services",
    HERE / "event_workflows.py",
    doc="Services with the examples and ``event_workflows.py``.",
)


@pytest.fixture
async def api(event_services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(event_services) as http:
        yield http


@pytest.fixture
def tokens(event_services: container.Services) -> dict[str, str]:
    return tokens_for(event_services)
