"""Fixtures of the API tests that several test files share."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from taskflow import clock
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests.api import reminders
from tests.webhook_receiver import Receiver


@dataclasses.dataclass(frozen=True)
class World:
    """What most API tests work with: the HTTP client of the app, a bearer token per example
    person, the services behind the app and the frozen clock they read."""

    client: httpx.AsyncClient
    people: dict[str, str]
    services: container.Services
    clock: clock.FrozenClock


@pytest.fixture
def world(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> World:
    """The test's :class:`World` (the same client, people, services and clock as the fixtures
    of those names)."""
    return World(client, people, services, frozen_clock)


@pytest.fixture
async def reminded(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> reminders.Reminded:
    """A vendor run two business days on, its contact reminded once per document."""
    return await reminders.vendor_reminded(client, people, services, frozen_clock)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver listening on loopback, stopped after the test."""
    found = Receiver().start()
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture
async def sender(services: container.Services) -> AsyncIterator[webhook_delivery.Sender]:
    """The webhook sender of ``services``, without jitter so that backoffs are exact."""
    found = webhook_delivery.Sender(services, jitter=lambda: 0.0)
    try:
        yield found
    finally:
        await found.close()
