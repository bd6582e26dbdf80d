"""A parent cancelled while its child ends, at the same moment over HTTP, many rounds: each
request on its own database connection. Whatever the interleaving, both answers are typed
(never INTERNAL or BUSY: the lock order is parent before child), and the runs settle to one
outcome: the parent cancelled, never routed; the child either completed (its end noted and
left unread, the parent having ended) or cancelled naming its parent, never both; and the
child's row settled, with nothing left in flight."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx
import pytest

from taskflow.service.common import container
from taskflow.service.compose import children as lane
from tests.api import workflows as w
from tests.api.test_children import CANCEL, api, composing, lines, run, settle, start, tokens
from tests.conftest import gql

pytestmark = pytest.mark.anyio

__all__ = ["api", "composing", "tokens"]  # the fixtures this module borrows

ROUNDS = int(os.environ.get("TASKFLOW_RACE_ROUNDS", "6"))


async def test_a_parent_cancelled_while_its_child_ends_settles_to_one_outcome(
    api: httpx.AsyncClient, tokens: dict[str, str], composing: container.Services
) -> None:
    for n in range(ROUNDS):
        doc = f"R-{n}"
        parent_id = await start(api, tokens["app"], "compose-parent", doc)
        await settle(composing)
        slot = await w.slot_named(api, tokens["fiona"], "review", doc)
        cancel = {"input": {"runId": parent_id, "reason": "race"}}
        complete = w.complete(api, tokens["fiona"], slot["id"], {"score": 9})
        if n % 2:  # the parent's cancel against the child's end
            answers: list[Any] = await asyncio.gather(
                complete, gql(api, CANCEL, cancel, token=tokens["ada"])
            )
            cancelled = answers[1].ok()["cancelRun"]
        else:  # the worker cancelling the child against the child's end
            cancelled = (await gql(api, CANCEL, cancel, token=tokens["ada"])).ok()["cancelRun"]
            answers = await asyncio.gather(complete, lane.run_due(composing))
        completed = answers[0]
        assert cancelled["__typename"] == "RunSuccess", cancelled
        assert completed["__typename"] in ("CompleteSuccess", "RunNotActive"), completed
        await asyncio.gather(lane.run_due(composing), lane.run_due(composing))
        await settle(composing)

        parent = await run(api, tokens["ada"], parent_id)
        assert (parent["state"], parent["status"]) == ("waiting", "CANCELLED")
        # Never resumed: a child's end after the cancel is noted, not acted on.
        assert all("no longer waits" in e["reason"] for e in lines(parent, "child.ended"))
        assert lines(parent, "child.uncaught") + lines(parent, "child.caught") == []
        review = next(c for c in parent["children"] if c["label"] == "review")
        assert review["status"] == "SETTLED"
        child = await run(api, tokens["ada"], review["run"]["id"])
        if completed["__typename"] == "CompleteSuccess":
            assert (child["state"], child["status"]) == ("passed", "COMPLETED")
            assert lines(child, "run.cancelled") == []
            assert len(lines(parent, "child.ended")) == 1
        else:
            assert child["status"] == "CANCELLED"
            [line] = lines(child, "run.cancelled")
            assert "its parent run" in line["reason"]
    assert await lane.in_flight(composing) == 0
