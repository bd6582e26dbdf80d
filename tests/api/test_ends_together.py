"""Parents' ends read back together (docs/composition.md, "A parent's ends read together"):
the child lane resumes several parents whose children all ended well in one transaction and
one write, and each parent ends as it would alone. Three parents resumed cost about what one
does, not three times its statements."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.compose import children as lane
from tests import conftest
from tests.api import workflows as w
from tests.api.test_children import settle
from tests.api.test_inbox_queries import Counter
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

pairing, api, tokens = app_with("pairing", Path(__file__).parent / "pair_workflows.py")

STATE = """query($id: ID!) { run(id: $id) { state status children { label status }
  timeline(first: 50) { edges { node { kind reason } } } } }"""


async def paired(api: httpx.AsyncClient, tokens: dict[str, str], docs: list[str]) -> list[str]:
    """A pair per doc, its two notes started and then filed by fiona: their ends wait."""
    ids = []
    for doc in docs:
        notes = {"title": doc, "first": f"{doc}-a", "second": f"{doc}-b"}
        started = await w.start(api, tokens["app"], "pair", "doc", doc, notes)
        assert started["__typename"] == "StartRunSuccess", started
        ids.append(str(started["run"]["id"]))
    return ids


async def file_notes(api: httpx.AsyncClient, tokens: dict[str, str]) -> None:
    for note in await w.inbox(api, tokens["fiona"]):
        assert (await w.claim(api, tokens["fiona"], note["id"]))["__typename"] == "SlotSuccess"
        done = await w.complete(api, tokens["fiona"], note["id"], {})
        assert done["__typename"] == "CompleteSuccess", done


async def counted_settle(services: container.Services) -> int:
    """The statements the child lane sends reading every end back."""
    counter = Counter()
    database = await conftest.reconnect(services.db, query_logger=counter)
    try:
        while await lane.run_due(dataclasses.replace(services, db=database)):
            pass
    finally:
        await database.close()
    return len([q for q in counter.statements if not q.startswith(("BEGIN", "COMMIT"))])


async def test_parents_whose_children_all_ended_are_resumed_in_one_write(
    pairing: container.Services, api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    [alone] = await paired(api, tokens, ["D-1"])
    await settle(pairing)  # the notes start
    await file_notes(api, tokens)
    one = await counted_settle(pairing)

    three = await paired(api, tokens, ["D-2", "D-3", "D-4"])
    await settle(pairing)
    await file_notes(api, tokens)
    many = await counted_settle(pairing)

    for run_id in [alone, *three]:
        found = (await gql(api, STATE, {"id": run_id}, token=tokens["app"])).ok()["run"]
        assert (found["state"], found["status"]) == ("filed", "COMPLETED"), found
        assert sorted(c["label"] for c in found["children"]) == ["first", "second"]
    # One parent alone is read the one-parent way; three together in one write cost about
    # what it does (read one after the other: 2x as many, and more for more parents).
    assert many < 1.5 * one, (one, many)
