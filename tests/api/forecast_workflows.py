"""A workflow whose milestones warn at their own forecast thresholds."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, business, milestone, real, who


class WatchedReview(Workflow):
    """Finance reviews a contract: the claim's forecast warns early, the finish's as the
    deployment says."""

    name = "watched-review"
    tracks = "contract"

    review = State(
        initial=True,
        slots=[
            Slot(
                "review",
                candidates=who.role("finance"),
                milestones=[
                    milestone.assigned(within=real.hours(1), forecast_alert=0.4),
                    milestone.finished(within=business.hours(8)),
                ],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
