"""Undo against a timeout that moves the run (docs/history.md, "Races"): the reviewer takes
back her review just as the held state's timeout falls due. Whichever locks the run first
wins: the undo (the run is back in review, the timeout never fires) or the timeout (the run
lapsed, the undo is refused); never both, never neither."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from taskflow import clock
from taskflow.service.clocks import timers
from taskflow.service.common.container import Services
from tests.api import workflows as w
from tests.api.test_undo import RUN, undo
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

undo_services, api, tokens = app_with("undo_services", Path(__file__).parent / "undo_workflows.py")
ROUNDS = 4


async def fire(services: Services, frozen_clock: clock.FrozenClock, yielding: bool) -> int:
    """The worker's timer pass, at once or after letting the racing request run first (a
    turn of the event loop, not a deadline: the timer is due on the frozen clock already)."""
    if yielding:
        await asyncio.sleep(0)
    return await timers.run_due(services, frozen_clock.now())


async def test_undo_against_a_moving_timeout_has_one_outcome(
    undo_services: Services,
    api: httpx.AsyncClient,
    tokens: dict[str, str],
    frozen_clock: clock.FrozenClock,
) -> None:
    for n in range(ROUNDS):
        reference = f"O-{n}"
        started = await w.start(api, tokens["app"], "held-order", "order", reference, {})
        run_id = started["run"]["id"]
        review = await w.slot_named(api, tokens["fiona"], "review", reference)
        assert (await w.claim(api, tokens["fiona"], review["id"]))["__typename"] == "SlotSuccess"
        done = await w.complete(api, tokens["fiona"], review["id"], {})
        assert done["run"]["state"] == "held"
        frozen_clock.advance(timedelta(minutes=5))  # the timeout is due
        # Every other round the pass lets the request go first, so both orders are played
        # (at once, the pass usually locks the run before the request reaches it).
        undone, _ = await asyncio.gather(
            undo(api, tokens["fiona"], run_id), fire(undo_services, frozen_clock, n % 2 == 1)
        )
        # Later passes find nothing more to do on this run.
        await timers.run_due(undo_services, frozen_clock.now() + timedelta(hours=1))
        run = (await gql(api, RUN, {"id": run_id}, token=tokens["fiona"])).ok()["run"]
        states = [v["state"] for v in run["history"]]
        if "run" in undone:
            assert run["state"] == "review", run
            assert states == ["review", "held", "review"], states
        else:
            assert run["state"] == "lapsed", (run, undone)
            assert states == ["review", "held", "lapsed"], states
            # The latest change is the timeout's move: never undone.
            assert undone["__typename"] == "NotUndoable", undone
        frozen_clock.advance(timedelta(days=1))
