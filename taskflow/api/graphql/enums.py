"""The GraphQL enums that are core's own: each core enum registered once (``relay.core_enum``)
under its GraphQL name, with what each member means to a client. Modules of the API import them
from here (so they are registered before the schema is built); the refusal codes are in
``relay``."""

from __future__ import annotations

from taskflow.api.graphql import relay
from taskflow.core.attention import Reason
from taskflow.core.delivery import DeliveryState
from taskflow.core.runs.statuses import RunStatus, SlotStatus, StepStatus
from taskflow.core.timer_states import TimerStatus
from taskflow.core.webhook_events import DeliveryStatus

__all__ = [
    "DeliveryState",
    "DeliveryStatus",
    "Reason",
    "RunStatus",
    "SlotStatus",
    "StepStatus",
    "TimerState",
    "TimerStatus",
    "state_of",
]


relay.core_enum(
    RunStatus,
    name="RunStatus",
    description="Where a run stands.",
    values={
        RunStatus.ACTIVE: "Moving through its states.",
        RunStatus.COMPLETED: "Reached a terminal state.",
        RunStatus.CANCELLED: "Cancelled by someone.",
    },
)


relay.core_enum(
    SlotStatus,
    name="SlotStatus",
    description="Where a slot stands.",
    values={
        SlotStatus.PENDING: "Waits for sibling slots (after).",
        SlotStatus.OPEN: "Anyone among its candidates may take it.",
        SlotStatus.CLAIMED: "Held by one principal.",
        SlotStatus.SATISFIED: "Its event was deposited.",
        SlotStatus.CANCELLED: "The run left the state first.",
    },
)


relay.core_enum(
    StepStatus,
    name="StepStatus",
    description="Where an automatic step stands.",
    values={
        StepStatus.DUE: "Waits for its next attempt (dueAt), or for a worker to take it.",
        StepStatus.RUNNING: "A worker runs it; dueAt is the end of that worker's lease.",
        StepStatus.SUCCEEDED: "Its action returned result.",
        StepStatus.FAILED: "Its last attempt failed and an on_error route moved the run.",
        StepStatus.PARKED: "Its last attempt failed and no on_error route took it: retryStep it.",
        StepStatus.CANCELLED: "The run left the state before it ran (or finished).",
    },
)


relay.core_enum(
    TimerStatus,
    name="TimerState",
    description="Where a timer stands.",
    values={
        TimerStatus.ARMED: "Waits for dueAt (after a failed firing: its next attempt).",
        TimerStatus.FIRED: "It fired.",
        TimerStatus.CANCELLED: "No longer wanted: its slot or run moved on or ended.",
        TimerStatus.DEAD: "Its firing failed TASKFLOW_TIMER_MAX_ATTEMPTS times; see lastError, "
        "then retryTimer or discardTimer.",
        TimerStatus.DISCARDED: "A dead timer an admin gave up on (the reason is on the run's "
        "timeline).",
    },
)


relay.core_enum(
    DeliveryStatus,
    name="WebhookDeliveryState",
    description="Where a webhook delivery stands.",
    values={
        DeliveryStatus.PENDING: "Not delivered yet: waits for nextAttemptAt (or is being sent).",
        DeliveryStatus.DELIVERED: "The endpoint answered 2xx (see lastAttemptAt).",
        DeliveryStatus.DEAD: "Given up: a final answer (4xx other than 429, 3xx), or still "
        "failing past TASKFLOW_WEBHOOK_HORIZON. replayWebhookDeliveries sends it again.",
    },
)


relay.core_enum(
    DeliveryState,
    name="NotificationDeliveryState",
    description="Where a notification's delivery stands.",
    values={
        DeliveryState.PENDING: "Not sent yet; deliverable from deliverAt.",
        DeliveryState.SENDING: "Leased to a sender (takeNotifications, or the worker's e-mail) "
        "until leaseExpiresAt; deliverable again if it was not marked by then.",
        DeliveryState.SENT: "Sent (see sentAt).",
        DeliveryState.FAILED: "The last attempt failed for a reason that may pass (see "
        "lastError); deliverable again from nextAttemptAt.",
        DeliveryState.DEAD: "Given up: a permanent failure (a rejected address) or too many "
        "attempts (see lastError).",
    },
)


# Core's reasons are the GraphQL enum AttentionReason, each described with what clears it.
relay.core_enum(
    Reason,
    name="AttentionReason",
    description="Why something needs a person.",
    values={
        Reason.ROUTE_UNMATCHED: "The state's completion rule held but no route matched: "
        "the run waits. Clear it with goto (or by updating the subject).",
        Reason.TIMER_DEAD: "A timer failed every attempt and is parked DEAD. Clear it "
        "with retryTimer, rescheduleTimer or discardTimer.",
        Reason.TIMER_FAILING: "A timer's firing failed and is retried with backoff. Mend "
        "the cause, or rescheduleTimer.",
        Reason.HELD_BY_INACTIVE: "A slot is held by a deactivated principal. Clear it "
        "with reassignHeld.",
        Reason.BREACHED_UNHELD: "A slot breached its SLA and nobody holds it. Assign it, "
        "or someone claims it.",
        Reason.IDLE: "An active run has not changed for longer than TASKFLOW_IDLE_AFTER. "
        "Move it on (goto) or cancel it.",
        Reason.EVENT_EXPIRING: "An event kept for a slot not yet open expires within "
        "TASKFLOW_EVENT_EXPIRING_WITHIN. goto the state whose slot awaits it, or let it expire.",
        Reason.WEBHOOK_DISABLED: "A webhook endpoint was disabled: every delivery failed "
        "for TASKFLOW_WEBHOOK_DISABLE_AFTER (detail names it; the run is that of its oldest "
        "waiting event). Mend the receiver, then updateWebhookEndpoint with enabled: true.",
        Reason.STEP_PARKED: "An automatic step failed its last attempt and no on_error "
        "route took it: the run waits in its state. Mend the cause, then retryStep (or goto).",
    },
)


#: The GraphQL enum TimerState is core's ``TimerStatus``.
TimerState = TimerStatus


def state_of(status: str | None) -> TimerState | None:
    """The GraphQL state of a stored timer status (None stays None)."""
    return TimerStatus(status) if status else None
