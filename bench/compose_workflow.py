"""The workflows of ``bench/compose.py``: a parent awaiting ten children, each child one
automatic state whose action returns at once."""

from __future__ import annotations

from typing import Any

from taskflow import Child, State, Workflow

#: How many children a parent awaits.
CHILDREN = 10


async def noop(ctx: Any) -> dict[str, bool]:
    """Return at once: the bench measures the machinery around children, not their work."""
    return {"ok": True}


class BenchChild(Workflow):
    """A child: worked by an action, then done."""

    name = "bench-child"
    tracks = "item"

    work = State(initial=True, action=noop, on_success=["done"])
    done = State(terminal=True)


class BenchParent(Workflow):
    """A parent: awaits its ten children, then done."""

    name = "bench-parent"
    tracks = "item"

    waiting = State(
        initial=True,
        children=[Child("bench-child", label=f"c{i}") for i in range(CHILDREN)],
        then="done",
    )
    done = State(terminal=True)
