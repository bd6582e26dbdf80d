"""The breach forecast's model (issue 34 item 4; docs/insights.md, "Breach forecast"): the
chance that a live slot's milestone is breached, read from the workflow's own history.

Empirical and explained, on purpose: of the past visits of the slot's state that had
already lasted as long as this one has, the share that went on past the time this one has
left. No fitted parameters, so the reason can say exactly which runs it counted. Times are
in the same unit throughout (the milestone's: business seconds on its calendar, or wall).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

#: Below this many comparable past visits the forecast says "not enough history".
MIN_HISTORY = 20


@dataclass(frozen=True)
class Forecast:
    """A slot's chance of breaching (None: not enough history) and why, in words."""

    probability: float | None
    #: Past visits that had lasted as long as this one (the sample), and how many of them
    #: lasted past this one's due point.
    comparable: int
    late: int
    reason: str


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f}h"


def forecast(
    past: Sequence[float],
    elapsed: float,
    left: float,
    state: str,
    min_history: int = MIN_HISTORY,
) -> Forecast:
    """The chance that a visit of ``state`` that has lasted ``elapsed`` outlasts ``left``
    more, from ``past`` (sorted durations of finished visits of the state).

    Conditional on having lasted ``elapsed`` already: a visit still open after six hours is
    judged against the past visits that lasted six hours or more, not against the quick ones.
    """
    start = bisect.bisect_left(past, elapsed)
    comparable = len(past) - start
    if comparable < min_history:
        return Forecast(
            None,
            comparable,
            0,
            f"not enough history: {comparable} past visits of {state} lasted "
            f"{_hours(elapsed)} or more (at least {min_history} needed)",
        )
    due = elapsed + max(left, 0.0)
    late = len(past) - bisect.bisect_right(past, due)
    share = late / comparable
    return Forecast(
        share,
        comparable,
        late,
        f"of {comparable} past visits of {state} that lasted {_hours(elapsed)} or more, "
        f"{late} lasted past {_hours(due)} (this one's due point): {share:.0%}",
    )
