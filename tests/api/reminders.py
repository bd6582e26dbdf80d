"""The vendor's reminders: a vendor onboarding run moved on until it reminds its contact.

The vendor onboarding example reminds the vendor's contact every 2 business days
(on de-berlin) with a link requested. Timers fire through ``run_due(now)`` with a
moved clock (T0 is Tuesday 1 December 2026, 09:00 UTC, 10:00 in Berlin). The
``reminded`` fixture (tests/api/conftest.py) is :func:`vendor_reminded` for a test.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

import httpx

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers
from taskflow.service.common import container
from taskflow.store.delivery import notifications as outbox
from tests.api import magic as m
from tests.conftest import gql

VENDOR_ADDRESS = "onboarding@acme.example"

NOTIFICATIONS = """query($first: Int, $after: String, $filter: NotificationFilter) {
  notifications(first: $first, after: $after, filter: $filter) {
  totalCount pageInfo { hasNextPage endCursor }
  edges { node { id kind message recipient recipientKind recipientEmail recipientName
                 linkRequested linkId slotId runId createdAt deliverAt details } } } }"""


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """That time of December 2026, in UTC."""
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC)


async def step(services: container.Services, frozen_clock: clock.FrozenClock, to: datetime) -> int:
    """Move the clock to ``to`` and fire the timers due: how many fired."""
    frozen_clock.set(to)
    return await timers.run_due(services, to)


async def fire(services: container.Services, when: datetime) -> int:
    """:func:`step` on ``services``' own frozen clock: how many timers fired."""
    frozen = services.clock
    assert isinstance(frozen, clock.FrozenClock), frozen
    return await step(services, frozen, when)


async def notifications(
    client: httpx.AsyncClient, token: str, recipients: str | None = None
) -> list[dict[str, Any]]:
    """The notifications ``token`` may read, to ``recipients`` if given."""
    variables = {"first": 100, "filter": {"recipients": recipients} if recipients else None}
    result = await gql(client, NOTIFICATIONS, variables, token=token)
    return [e["node"] for e in result.ok()["notifications"]["edges"]]


class Reminded(NamedTuple):
    """A vendor run reminded of its two documents."""

    run: dict[str, Any]
    #: Document name -> its upload slot's id.
    uploads: dict[str, str]
    #: The vendor's reminders, oldest first.
    found: list[dict[str, Any]]

    def note_for(self, document: str) -> dict[str, Any]:
        """The first reminder of the upload slot of ``document``."""
        return next(n for n in self.found if n["slotId"] == self.uploads[document])


async def vendor_reminded(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    frozen_clock: clock.FrozenClock,
) -> Reminded:
    """A vendor run two business days on, reminded once per document."""
    run = await m.start_vendor(client, people)
    uploads = await m.upload_slots(client, people, run["id"])
    assert await step(services, frozen_clock, at(3, 8, 59)) == 0
    # Thursday 10:00 in Berlin: two business days after the slots opened, one per document.
    assert await step(services, frozen_clock, at(3, 9)) == 2
    return Reminded(run, uploads, await notifications(client, people["app"], "OUTSIDERS"))


async def remind(
    services: container.Services,
    run: dict[str, Any],
    *notes: tuple[str, str, datetime, dict[str, str]],
) -> None:
    """Write reminders of ``run`` (no slot) straight to the outbox, as the timers would: each
    note is (recipient, message, deliver_at, its address fields: recipient_email, ...),
    written at the services' now."""
    now = services.clock.now()
    run_id = relay.from_global_id(run["id"])[1]
    async with services.db.transaction() as conn:
        await outbox.notify(
            conn,
            [
                outbox.NewNotification(
                    recipient=recipient,
                    run_id=run_id,
                    slot_id=None,
                    kind="reminder",
                    message=message,
                    created_at=now,
                    deliver_at=deliver_at,
                    **address,
                )
                for recipient, message, deliver_at, address in notes
            ],
        )
