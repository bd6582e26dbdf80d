"""Candidates of a slot still pending do not read the run's links or their recipients.

Issue 15 point 2: Lee (legal) is a candidate of the legal review, pending until
the vendor's documents are in; the run is readable to him (he will review it),
but the upload slots' magic links, with the vendor's address, are not.
"""

from __future__ import annotations

import httpx
import pytest

from tests.api import magic
from tests.conftest import gql

pytestmark = pytest.mark.anyio

LINK_NODE = (
    """query($id: ID!) { node(id: $id) { __typename ... on MagicLink { recipientEmail } } }"""
)


async def test_a_pending_review_s_candidate_does_not_read_the_upload_links(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run = await magic.start_vendor(client, people)
    uploads = await magic.upload_slots(client, people, run["id"])
    slot_id = next(iter(uploads.values()))
    minted = await magic.mint(client, people["olga"], slot_id)
    assert minted["__typename"] == "MintMagicLinkSuccess", minted
    link_id = minted["link"]["id"]

    # Lee's review is pending: he reads the run and its slots...
    states = {s["name"]: s["status"] for s in await magic.slots(client, people["lee"], run["id"])}
    assert states["legal_review"] == "PENDING"
    # ...but no link and no recipient, by the slot or by the link's id.
    seen = (await gql(client, magic.SLOT_LINKS, {"id": slot_id}, token=people["lee"])).ok()
    assert seen["node"]["links"] == []
    by_id = (await gql(client, LINK_NODE, {"id": link_id}, token=people["lee"])).ok()
    assert by_id["node"] is None

    # Procurement (candidates of the upload, and a lead) still read them.
    seen = (await gql(client, magic.SLOT_LINKS, {"id": slot_id}, token=people["olga"])).ok()
    assert [k["recipientEmail"] for k in seen["node"]["links"]] == ["onboarding@acme.example"]
