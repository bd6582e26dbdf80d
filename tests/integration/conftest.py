"""Fixtures shared by the integration tests."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from taskflow import clock, config
from taskflow.service import container
from taskflow.service import principals as principal_service
from taskflow.store import db
from tests.conftest import EXAMPLE_PRINCIPALS

HERE = Path(__file__).resolve().parent


@pytest.fixture
async def sla_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Services with the examples and the timer tests' workflows (``sla_workflows.py``)."""
    with_ours = dataclasses.replace(
        settings, workflows=(*settings.workflows, str(HERE / "sla_workflows.py"))
    )
    database = await db.Database.connect(database_url)
    try:
        services = container.build(database, with_ours, frozen_clock)
        people = json.loads(EXAMPLE_PRINCIPALS.read_text())
        for person in people:
            if person["id"] == "app":
                # The example app's grants name the example workflows; here it also feeds
                # the timer tests' own workflows.
                person["powers"] = [{"power": "integration"}]
        await principal_service.load(services, people)
        yield services
    finally:
        await database.close()
