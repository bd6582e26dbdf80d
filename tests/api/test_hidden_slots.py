"""A slot the caller may not see answers every slot mutation alike: NOT_FOUND naming the slot.

docs/access.md, "Refusals": reading what is out of reach answers as absent. A mutation naming
such a slot (claim, release, complete, mintMagicLink, revokeMagicLink, ...) says "No slot has
the id ..." as for an id that does not exist, and never names the run behind it.
"""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.api import magic as m
from tests.api import workflows as w

pytestmark = pytest.mark.anyio

ABSENT_SLOT = "U2xvdDowMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA"


def _raw(global_id: str) -> str:
    """The slot's own id inside its global id (``Slot:<uuid>``), as refusals name it."""
    return base64.b64decode(global_id + "=" * (-len(global_id) % 4)).decode().split(":", 1)[1]


async def test_mint_and_claim_on_a_slot_out_of_reach_answer_as_for_no_slot(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run = await m.start_vendor(client, people, required_documents=["insurance"])
    upload = (await m.upload_slots(client, people, run["id"]))["insurance"]
    outsider = people["sid"]  # an employee: no grant on vendor onboarding, not a candidate

    minted = await m.mint(client, outsider, upload)
    claimed = await w.claim(client, outsider, upload)
    for answer in (minted, claimed):
        assert answer["__typename"] == "NotFoundRefusal", answer
        assert answer["code"] == "NOT_FOUND"
        assert answer["message"] == f"No slot has the id {_raw(upload)!r}.", answer
        assert run["id"] not in answer["message"], answer
        assert "run" not in answer["message"].lower(), answer

    # Alike an id that does not exist at all.
    absent = await m.mint(client, outsider, ABSENT_SLOT)
    assert absent["__typename"] == "NotFoundRefusal", absent
    assert absent["message"] == f"No slot has the id {_raw(ABSENT_SLOT)!r}."

    # Nothing was minted: the slot's manager sees no link.
    assert (await m.slot_links(client, people["olga"], upload))["links"] == []
    # The refusal left no line naming the outsider on the run's timeline.
    lines = await w.timeline(client, people["olga"], run["id"])
    assert not [line for line in lines if line["actor"] == "sid"]
