"""The workflow of ``bench/steps.py``: one automatic state whose action returns at once."""

from __future__ import annotations

from typing import Any

from taskflow import State, Workflow


async def noop(ctx: Any) -> dict[str, bool]:
    """Return at once: the bench measures the machinery around actions, not actions."""
    return {"ok": True}


class BenchSteps(Workflow):
    """An item is worked on by an action, then done."""

    name = "bench-steps"
    tracks = "item"

    work = State(initial=True, action=noop, on_success=["done"])
    done = State(terminal=True)
