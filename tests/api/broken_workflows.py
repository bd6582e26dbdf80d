"""A workflow with a definition bug: its first state's enter hook fails (an EngineError)."""

from __future__ import annotations

from taskflow import HookContext, Route, State, Workflow


def failing_screen(ctx: HookContext) -> str | None:
    """A hook with a bug of its author's."""
    raise ZeroDivisionError("the hook divided by zero")


class Broken(Workflow):
    """Starting it always fails inside the engine: a bug, not the caller's fault."""

    name = "broken-hook"
    tracks = "gadget"

    screening = State(initial=True, on_enter=failing_screen, then=[Route("done")])
    done = State(terminal=True)
