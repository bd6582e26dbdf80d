"""The console's board per workflow, a run's page with its timeline, moves, delegation and
pages of lists, over HTTP: each shows what the API would show the same caller, and acts
through the same use cases (refusals typed, nothing changed)."""

from __future__ import annotations

import re

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.common.container import Services
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.test_console_pages import SAME, _sign_in, _slot_ids
from tests.api.test_files import PDF, ZIP
from tests.conftest import asgi_client, gql

pytestmark = pytest.mark.anyio

BOARD = "/console/boards/support-ticket"


def _local(global_id: str) -> str:
    return relay.from_global_id(global_id)[1]


async def _open_ticket(client: httpx.AsyncClient, people: dict[str, str], ref: str) -> str:
    """A ticket triaged by Tess, now with the billing team (state open): its run's id."""
    started = await w.start(
        client, people["helpdesk"], "support-ticket", "ticket", ref, {**w.TICKET, "reference": ref}
    )
    triage = await w.slot_named(client, people["tess"], "triage", ref)
    assert (await w.claim(client, people["tess"], triage["id"]))["__typename"] == "SlotSuccess"
    done = await w.complete(
        client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"}
    )
    assert done["run"]["state"] == "open", done
    return _local(started["run"]["id"])


def _cards(page: str) -> list[str]:
    return re.findall(r'<article class="card" data-run="([0-9a-f-]+)"', page)


async def test_the_board_shows_lanes_cards_and_legal_moves(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id = await _open_ticket(client, people, "T-1")
    await _sign_in(client, people["tara"])
    index = await client.get("/console/boards")
    assert index.status_code == 200
    assert f'href="{BOARD}"' in index.text
    page = await client.get(BOARD)
    assert page.status_code == 200, page.text
    assert _cards(page.text) == [run_id]
    lane = page.text.split('data-lane="open"')[1].split("</section>")[0]
    assert "ticket T-1" in lane
    assert 'data-lane="closed"' not in page.text  # ended lanes only when asked
    assert 'data-lane="closed"' in (await client.get(BOARD + "?ended=1")).text
    # Tara's legal move, with the field it takes.
    assert 'name="_move" value="ask_customer"' in lane
    assert ">Question (required)</label>" in lane

    # The move without its field: the API's typed refusal, nothing moved.
    form = {"_move": "ask_customer", "_back": BOARD}
    bad = await client.post(f"/console/runs/{run_id}/move", data=form, headers=SAME)
    assert bad.status_code == 400
    assert re.search(r'role="alert" id="refusal"><code>PAYLOAD_INVALID</code>', bad.text)
    assert "open (active)" in bad.text
    moved = await client.post(
        f"/console/runs/{run_id}/move",
        data={**form, "question": "Which browser?"},
        headers=SAME,
    )
    assert moved.status_code == 303, moved.text
    assert moved.headers["location"] == BOARD
    after = (await client.get(BOARD)).text
    assert run_id in after.split('data-lane="waiting_for_customer"')[1].split("</section>")[0]


async def test_a_run_page_shows_its_timeline_a_page_at_a_time(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run_id = await _open_ticket(client, people, "T-2")
    await _sign_in(client, people["tara"])
    page = await client.get(f"/console/runs/{run_id}")
    assert page.status_code == 200, page.text
    assert "ticket T-2" in page.text
    assert '<dd id="state">open (active)</dd>' in page.text
    lines = re.findall(r'<tr data-line="(\d+)">', page.text)
    assert lines
    assert "run.started" in page.text
    assert "slot.satisfied" in page.text
    assert "Next page" not in page.text
    # Past the last line: an empty page that links back to the first.
    later = await client.get(f"/console/runs/{run_id}?after={lines[-1]}")
    assert re.findall(r'<tr data-line="(\d+)">', later.text) == []
    assert f'href="/console/runs/{run_id}">First page' in later.text


async def test_nobody_sees_a_board_or_run_the_api_would_not_show_them(
    client: httpx.AsyncClient, people: dict[str, str], services: Services
) -> None:
    run_id = await _open_ticket(client, people, "T-3")
    # Leah leads expenses only: an empty ticket board, no ticket run, no move on it.
    await _sign_in(client, people["leah"])
    assert _cards((await client.get(BOARD)).text) == []
    assert (await client.get(f"/console/runs/{run_id}")).status_code == 404
    move = {"_move": "ask_customer", "question": "x"}
    refused = await client.post(f"/console/runs/{run_id}/move", data=move, headers=SAME)
    assert refused.status_code == 404
    assert (await client.get("/console/boards/no-such-workflow")).status_code == 404
    assert (await client.get(f"/console/runs/{run_id}?after=x")).status_code == 404
    async with asgi_client(services) as anonymous:
        for path in ("/console/boards", BOARD, f"/console/runs/{run_id}"):
            assert (await anonymous.get(path)).status_code == 401
        moved = await anonymous.post(f"/console/runs/{run_id}/move", data={}, headers=SAME)
        assert moved.status_code == 401
    # Another site's form moves nothing.
    await _sign_in(client, people["tara"])
    forged = await client.post(
        f"/console/runs/{run_id}/move",
        data={"_move": "ask_customer", "question": "x"},
        headers={"Origin": "https://evil.example"},
    )
    assert forged.status_code == 403
    assert "open (active)" in (await client.get(f"/console/runs/{run_id}")).text


async def test_a_delegate_hands_a_slot_over_from_the_console(
    client: httpx.AsyncClient, people: dict[str, str], services: Services
) -> None:
    await _open_ticket(client, people, "T-4")
    response = await w.slot_named(client, people["sasha"], "first_response", "T-4")
    slot_id = _local(response["id"])
    await _sign_in(client, people["tara"])  # the billing team's lead: a delegate
    page = await client.get(f"/console/slots/{slot_id}")
    assert '<label for="assign-to">Delegate to (login)</label>' in page.text
    handed = await client.post(
        f"/console/slots/{slot_id}/assign", data={"to": "sven"}, headers=SAME
    )
    assert handed.status_code == 303, handed.text
    page = await client.get(f"/console/slots/{slot_id}")
    assert "held by sven" in page.text
    assert f'action="/console/slots/{slot_id}/release"' in page.text  # a delegate may release
    async with asgi_client(services) as sasha:
        await _sign_in(sasha, people["sasha"])  # a candidate, not a delegate
        refused = await sasha.post(
            f"/console/slots/{slot_id}/assign", data={"to": "sasha"}, headers=SAME
        )
        assert refused.status_code == 409
        assert "<code>NOT_DELEGATE</code>" in refused.text
    released = await client.post(f"/console/slots/{slot_id}/release", headers=SAME)
    assert released.status_code == 303
    assert "open" in (await client.get(f"/console/slots/{slot_id}")).text


async def test_the_inbox_pages_past_its_first_hundred(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    for n in range(103):
        await w.start_expense(client, people["app"], f"EXP-{n:03d}")
    await _sign_in(client, people["fiona"])
    first = await client.get("/console")
    assert len(_slot_ids(first.text)) == 100
    nxt = re.search(r'href="(/console\?sort=urgency&amp;after=[^"]+)" rel="next"', first.text)
    assert nxt is not None
    second = await client.get(nxt.group(1).replace("&amp;", "&"))
    assert second.status_code == 200
    rest = _slot_ids(second.text)
    assert len(rest) == 3
    assert not set(rest) & set(_slot_ids(first.text))
    assert 'rel="next"' not in second.text
    assert 'href="/console?sort=urgency">First page' in second.text
    bad = await client.get("/console?after=not-a-cursor")
    assert bad.status_code == 400
    assert "<code>INVALID_INPUT</code>" in bad.text


async def test_a_file_field_takes_the_document_itself_checked_by_its_bytes(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    run = await m.start_vendor(client, people)
    slot_id = _local((await m.upload_slots(client, people, run["id"]))["bank details"])
    await _sign_in(client, people["olga"])
    page = await client.get(f"/console/slots/{slot_id}")
    assert 'enctype="multipart/form-data"' in page.text
    assert re.search(r'<input id="f-document" name="document" type="file" multiple', page.text)
    assert "PDF, PNG, JPEG; up to 3 files of at most 10 MB each." in page.text
    url = f"/console/slots/{slot_id}/complete"
    zipped = await client.post(
        url, files={"document": ("bank.pdf", ZIP, "application/pdf")}, headers=SAME
    )
    assert zipped.status_code == 422, zipped.text
    assert 'class="field-error" id="e-document"' in zipped.text
    done = await client.post(
        url,
        data={"_back": "/console"},
        files={"document": ("bank.pdf", PDF, "application/pdf")},
        headers=SAME,
    )
    assert done.status_code == 303, done.text
    slot = await gql(
        client, m.SLOT_LINKS, {"id": relay.to_global_id("Slot", slot_id)}, token=people["olga"]
    )
    [ref] = slot.ok()["node"]["payload"]["document"]
    assert ref["name"] == "bank.pdf"
    assert ref["type"] == "application/pdf"
    assert ref["size"] == len(PDF)
