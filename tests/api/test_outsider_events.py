"""Events never carry an outsider's e-mail address (docs/events.md, docs/security.md).

An outsider completes through a real magic link; every outbox row written and every
webhook body a real receiver got is read whole: the address is nowhere, the outsider
is named by the link (``link:<MagicLink id>``, the id the API and ``linkId`` use).
"""

from __future__ import annotations

import json

import httpx
import pytest

from taskflow import clock
from taskflow.service.common import container
from taskflow.service.delivery import webhook_delivery
from tests.api import magic as m
from tests.api import test_webhooks_api as hooks
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio

settings = hooks.settings
ADDRESS = "onboarding@acme.example"


async def test_no_event_carries_the_address_of_an_outsider_who_completed_by_link(
    client: httpx.AsyncClient,
    people: dict[str, str],
    services: container.Services,
    receiver: Receiver,
    sender: webhook_delivery.Sender,
    frozen_clock: clock.FrozenClock,
) -> None:
    await hooks.listening(client, people["ada"], receiver)  # every event type
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    link = await m.minted(client, people, upload, email=ADDRESS.upper(), name="Anna Acme")
    done = await m.submit(client, link["url"], {}, files=m.pdf("i.pdf"))
    assert done.status_code == 200, done.text
    assert await hooks.drain(sender, frozen_clock) > 0

    async with services.db.connection() as conn:
        rows = [
            json.loads(r[0])
            for r in await conn.fetch("SELECT row_to_json(v)::text FROM outbox_event v")
        ]
    bodies = [r.body for r in receiver.received]
    types = {row["type"] for row in rows}
    assert {"slot.completed", "link.used", "link.minted"} <= types, types
    assert len(bodies) >= len(rows)
    for text in [json.dumps(row) for row in rows] + bodies:
        assert ADDRESS not in text.lower(), text
        assert "anna acme" not in text.lower(), text  # nor the recipient's name
        assert "email:" not in text, text

    # The outsider is the link, in the id format the API gives links.
    by_type = {p["type"]: p["data"] for p in receiver.verified()}
    link_id = link["link"]["id"]
    assert by_type["link.used"]["linkId"] == link_id
    assert by_type["link.used"]["actor"] == f"link:{link_id}"
    assert by_type["slot.completed"]["actor"] == f"link:{link_id}"
    assert by_type["slot.completed"]["by"] == f"link:{link_id}"
    # The timeline, read with the reader's grants, keeps who it was.
    seen = await m.slot_links(client, people["olga"], upload)
    assert seen["satisfiedBy"] == f"email:{ADDRESS}"
