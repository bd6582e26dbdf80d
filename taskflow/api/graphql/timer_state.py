"""The GraphQL enum of a timer's state (shared by timers and their refusals)."""

from __future__ import annotations

from enum import Enum

import strawberry

from taskflow.core.timer_states import TimerStatus


@strawberry.enum(description="Where a timer stands.")
class TimerState(Enum):
    ARMED = strawberry.enum_value(
        TimerStatus.ARMED.value,
        description="Waits for dueAt (after a failed firing: its next attempt).",
    )
    FIRED = strawberry.enum_value(TimerStatus.FIRED.value, description="It fired.")
    CANCELLED = strawberry.enum_value(
        TimerStatus.CANCELLED.value,
        description="No longer wanted: its slot or run moved on or ended.",
    )
    DEAD = strawberry.enum_value(
        TimerStatus.DEAD.value,
        description="Its firing failed TASKFLOW_TIMER_MAX_ATTEMPTS times; see lastError, then "
        "retryTimer or discardTimer.",
    )
    DISCARDED = strawberry.enum_value(
        TimerStatus.DISCARDED.value,
        description="A dead timer an admin gave up on (the reason is on the run's timeline).",
    )


def state_of(status: str | None) -> TimerState | None:
    """The GraphQL state of a stored timer status (None stays None)."""
    return TimerState[TimerStatus(status).name] if status else None
