"""The console's card fragments over HTTP (docs/console.md, "Live pages"): a slot's inbox row
and a run's board card, under the pages' session and rules: 401 without a session, 404 for
what the caller may not see, 204 for what they see that is not on that page, else the card
as the page renders it, with its place (``data-order``) and, for a board, its lane."""

from __future__ import annotations

import httpx
import pytest

from taskflow.api.graphql.common import relay
from tests.api import workflows as w
from tests.api.test_console_boards import _open_ticket
from tests.api.test_console_pages import _sign_in

pytestmark = pytest.mark.anyio


async def test_a_slot_s_row_for_whoever_may_see_it(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start_expense(client, people["app"], "EXP-F1")
    slot = await w.slot_named(client, people["fiona"], "finance_review", "EXP-F1")
    local = relay.from_global_id(slot["id"])[1]
    assert (await client.get(f"/console/cards/slot/{slot['id']}")).status_code == 401

    await _sign_in(client, people["fiona"])
    for asked in (slot["id"], local):  # a subscription's global id, or the page's own
        row = await client.get(f"/console/cards/slot/{asked}?sort=urgency")
        assert row.status_code == 200, row.text
        assert row.text.lstrip().startswith(f'<tr id="slot-{local}"')
        assert f'data-id="{slot["id"]}"' in row.text
        assert "data-order=" in row.text
        assert "EXP-F1" in row.text

    # Frank takes it: Fiona still sees the slot, but it is not in her inbox.
    assert (await w.claim(client, people["frank"], slot["id"]))["__typename"] == "SlotSuccess"
    gone = await client.get(f"/console/cards/slot/{slot['id']}")
    assert (gone.status_code, gone.text) == (204, "")

    await _sign_in(client, people["sid"])  # no part in the expense
    assert (await client.get(f"/console/cards/slot/{slot['id']}")).status_code == 404
    missing = relay.to_global_id("Slot", "00000000-0000-4000-8000-000000000000")
    assert (await client.get(f"/console/cards/slot/{missing}")).status_code == 404


async def test_a_run_s_board_card_with_its_lane(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id = await _open_ticket(client, people, "T-F1")
    path = f"/console/cards/run/{relay.to_global_id('Run', run_id)}"
    assert (await client.get(path)).status_code == 401

    await _sign_in(client, people["tara"])
    card = await client.get(path)
    assert card.status_code == 200, card.text
    assert card.text.lstrip().startswith(f'<article class="card" data-run="{run_id}"')
    assert 'data-state="open"' in card.text
    assert "ticket T-F1" in card.text
    assert (await client.get(f"/console/cards/run/{run_id}")).status_code == 200

    await _sign_in(client, people["fiona"])  # finance: not the ticket's team
    assert (await client.get(path)).status_code == 404
