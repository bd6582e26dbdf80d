"""Two versions of one workflow side by side, as docs/versions.md recommends.

Version 2 adds an HR check after the manager's approval; runs started on
version 1 keep version 1's rules (approved straight after the manager).
"""

from __future__ import annotations

from taskflow import Field, Route, Slot, State, Workflow, migration, payload, who


def _review(after_approval: str) -> State:
    return State(
        initial=True,
        slots=[
            Slot(
                "review",
                label="Review leave request",
                fields=[Field.choice("decision", ["approve", "reject"])],
                candidates=who.role("manager"),
            )
        ],
        then=[
            Route("rejected", when=payload.review.decision == "reject"),
            Route(after_approval),
        ],
    )


class LeaveRequestV1(Workflow):
    """A manager approves or rejects a leave request."""

    name = "leave-request"
    version = 1
    tracks = "leave"

    review = _review("approved")
    approved = State(terminal=True)
    rejected = State(terminal=True)


class LeaveRequestV2(Workflow):
    """As version 1, then finance checks the leave balance."""

    name = "leave-request"
    version = 2
    tracks = "leave"
    # Runs waiting for the manager could stay where they are (taskflow runs migrate --plan).
    migrations = [migration.from_version(1, review=migration.stay)]

    review = _review("hr_check")
    hr_check = State(
        slots=[Slot("hr_check", label="Check the leave balance", candidates=who.role("finance"))],
        then=[Route("approved")],
    )
    approved = State(terminal=True)
    rejected = State(terminal=True)
