"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from taskflow import clock, config
from taskflow.service import container
from tests.conftest import services_with

HERE = Path(__file__).resolve().parent


@pytest.fixture
async def sla_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Services with the examples and the timer tests' workflows (``sla_workflows.py``)."""
    async with services_with(
        database_url, settings, frozen_clock, HERE / "sla_workflows.py"
    ) as services:
        yield services


@pytest.fixture
async def step_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Services with the examples and the automatic steps' workflows (``step_workflows.py``)."""
    async with services_with(
        database_url, settings, frozen_clock, HERE / "step_workflows.py"
    ) as services:
        yield services
