"""Actions are called with what they ask for: the whole context, or its parts by name."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from taskflow.service.steps import step_actions
from taskflow.steps import StepContext

CTX = StepContext(
    run_id="r",
    workflow="w",
    state="s",
    kind="action",
    subject={"amount": 5},
    idempotency_key="r:1:step",
    attempt=2,
    now=datetime(2026, 12, 1, tzinfo=UTC),
    payload={"review": {"ok": True}},
    result={"pay": {"id": 1}},
)


async def whole(ctx: StepContext) -> Any:
    return ctx.attempt


async def named(idempotency_key: str, subject: Any, attempt: int) -> Any:
    return (idempotency_key, subject["amount"], attempt)


async def positional(s: Any, f: Any, k: str) -> Any:
    return (s["amount"], f["result"]["pay"]["id"], k)


def test_each_signature_gets_what_it_asks_for() -> None:
    assert asyncio.run(step_actions.invoke(whole, CTX)) == 2
    assert asyncio.run(step_actions.invoke(named, CTX)) == ("r:1:step", 5, 2)
    assert asyncio.run(step_actions.invoke(positional, CTX)) == (5, 1, "r:1:step")
