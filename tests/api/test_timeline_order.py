"""One instant per decision, and the timeline's total order.

The clock here moves on every read, as a real one does: a decision that read it
twice (the engine's lines at one instant, the clock lines written after at
another) would show it. Every line a decision writes carries the one instant the
decision took, and the timeline comes in its sequence (the line ids: every writer
of a run's timeline holds the run's lock, so they grow in the order of decisions).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from taskflow import clock
from tests.api import workflows as w
from tests.api.conftest import World
from tests.conftest import T0, gql

pytestmark = pytest.mark.anyio

TIMELINE = """query($id: ID!) { run(id: $id) { timeline(first: 100) {
  edges { node { id kind at slotId } } } } }"""


class TickingClock(clock.FrozenClock):
    """A clock that moves a millisecond every time it is read."""

    def now(self) -> datetime:
        return self.advance(timedelta(milliseconds=1))


@pytest.fixture
def frozen_clock() -> clock.FrozenClock:
    return TickingClock(T0)


async def _timeline(client: httpx.AsyncClient, token: str, run_id: str) -> list[dict[str, Any]]:
    result = await gql(client, TIMELINE, {"id": run_id}, token=token)
    return [e["node"] for e in result.ok()["run"]["timeline"]["edges"]]


async def test_a_decision_has_one_instant_and_lines_come_in_order(world: World) -> None:
    client, people = world.client, world.people
    started = await w.start(client, people["app"], "support-ticket", "ticket", "T-1", w.TICKET)
    run_id = started["run"]["id"]
    triage = await w.slot_named(client, people["tess"], "triage")
    claimed = await w.claim(client, people["tess"], triage["id"])
    assert claimed["__typename"] == "SlotSuccess"
    done = await w.complete(
        client, people["tess"], triage["id"], {"priority": "P2", "category": "bug"}
    )
    assert done["__typename"] == "CompleteSuccess"
    assert done["run"]["state"] == "open"

    lines = await _timeline(client, people["ada"], run_id)
    ids = [int(line["id"]) for line in lines]
    assert ids == sorted(ids), "the timeline comes in its sequence"
    instants = [datetime.fromisoformat(line["at"]) for line in lines]
    assert instants == sorted(instants), [(x["kind"], x["at"]) for x in lines]

    # The completion: from the triage's slot.satisfied line to the end of the timeline.
    kinds = [line["kind"] for line in lines]
    first = kinds.index("slot.satisfied")
    decision = lines[first:]
    assert {"slot.satisfied", "clock.met", "state.exited", "state.entered"} <= {
        line["kind"] for line in decision
    }, kinds
    assert len({line["at"] for line in decision}) == 1, [(x["kind"], x["at"]) for x in decision]
    # The claim before it was a decision of its own, earlier.
    claim_line = next(x for x in lines if x["kind"] == "slot.claimed")
    assert datetime.fromisoformat(claim_line["at"]) < datetime.fromisoformat(decision[0]["at"])
