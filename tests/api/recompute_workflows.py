"""A workflow for the recompute-policy tests: three slots whose finished budget follows the
case's priority (P1: 2 business hours, P3: 8), one per recompute policy."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, budget_by, business, milestone, subject, who

_BY_PRIORITY = budget_by(
    subject.priority, {"P1": business.hours(2), "P3": business.hours(8)}, default=business.hours(8)
)


def _slot(name: str, policy: str) -> Slot:
    return Slot(
        name,
        candidates=who.role("finance"),
        milestones=[milestone.finished(within=_BY_PRIORITY, recompute=policy)],
    )


class Recompute(Workflow):
    """Three checks of one case, each clock recomputed its own way when the priority changes."""

    name = "recompute"
    tracks = "case"
    calendar = "uk-london"

    checking = State(
        initial=True,
        slots=[
            _slot("kept", "keep-elapsed"),
            _slot("restarted", "restart"),
            _slot("retro", "retroactive"),
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
