"""Workflows for the retention tests: one keeps ended runs 90 days, one sets nothing."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, milestone, real, who


class KeptBriefly(Workflow):
    """Finance checks a request within two hours; ended runs are kept 90 days."""

    name = "kept-briefly"
    tracks = "request"
    calendar = "uk-london"
    retention = real.days(90)

    checking = State(
        initial=True,
        slots=[
            Slot(
                "check",
                candidates=who.role("finance"),
                milestones=[milestone.finished(within=real.hours(2))],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)


class KeptForEver(KeptBriefly):
    """The same, with no retention of its own (TASKFLOW_RETENTION_DAYS decides)."""

    name = "kept-for-ever"
    retention = None
