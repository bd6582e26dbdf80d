"""A workflow of the undo race tests: a completion that may be undone (no window) into a
state whose timeout moves the run on after five minutes."""

from __future__ import annotations

from taskflow import Route, Slot, State, Undoable, Workflow, real, timeout, who


class HeldOrder(Workflow):
    """Finance reviews an order, which is then held for release; unreleased, it lapses."""

    name = "held-order"
    tracks = "order"

    review = State(
        initial=True,
        slots=[Slot("review", candidates=who.role("finance"))],
        then=[Route("held")],
        # The review's completion may be taken back, for as long as it is the latest change.
        undoable=Undoable(),
    )
    held = State(
        slots=[Slot("release", candidates=who.role("finance"))],
        then=[Route("released")],
        timeouts=[timeout(real.minutes(5), move_to="lapsed")],
    )
    # Lapsed orders are chased (not ended), so an undo after the lapse meets the timeout's
    # move, which is never undone, rather than an ended run.
    lapsed = State(slots=[Slot("chase", candidates=who.role("finance"))], then=[Route("released")])
    released = State(terminal=True)
