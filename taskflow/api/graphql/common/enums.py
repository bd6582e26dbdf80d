"""The GraphQL enums that are core's own: each core enum registered once (:func:`core_enum`)
under its GraphQL name, with what each member means to a client (the refusal codes too). Modules
of the API import them from here, so they are registered before the schema is built."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from enum import Enum
from typing import TypeVar

import strawberry

from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.core.common.refusal_codes import PAGE_ONLY, RefusalCode
from taskflow.core.delivery.delivery import DeliveryState
from taskflow.core.delivery.webhook_events import DeliveryStatus
from taskflow.core.operate.attention import Reason
from taskflow.core.runs.awaiting import WaitFor
from taskflow.core.runs.statuses import ChildStatus, RunStatus, SlotStatus, StepStatus

__all__ = [
    "ChildStatus",
    "DeliveryState",
    "DeliveryStatus",
    "Reason",
    "RefusalCode",
    "RunStatus",
    "SlotStatus",
    "StepStatus",
    "TimerState",
    "TimerStatus",
    "WaitFor",
    "state_of",
]


E = TypeVar("E", bound=Enum)


#: What each refusal code means, as the GraphQL enum describes it (in the enum's order).
CODE_DESCRIPTIONS: dict[RefusalCode, str] = {
    RefusalCode.INVALID_INPUT: "An input value is wrong; see field and message.",
    RefusalCode.FORBIDDEN: "The caller lacks the role or candidacy the action needs.",
    RefusalCode.NOT_FOUND: "The target does not exist or is not visible to the caller.",
    RefusalCode.NOT_CANDIDATE: "The principal is not among the slot's candidates.",
    RefusalCode.ALREADY_CLAIMED: "Someone holds the slot already; see holder.",
    RefusalCode.NOT_HOLDER: "Only the slot's holder may do this.",
    RefusalCode.NOT_DELEGATE: "Only the holder or a delegate may hand the slot over.",
    RefusalCode.SLOT_NOT_OPEN: "The slot is no longer open (satisfied or cancelled).",
    RefusalCode.STALE_VERSION: "The slot (or run) changed since the caller loaded it; reload.",
    RefusalCode.PAYLOAD_INVALID: "The payload does not fit the slot's fields; see problems.",
    RefusalCode.WRONG_EVENT: "The slot waits for another event.",
    RefusalCode.RUN_NOT_ACTIVE: "The run has ended; nothing more can happen on it.",
    RefusalCode.SUBJECT_GONE: "The run's subject was deleted (deleteSubject); nothing more "
    "can happen on its runs.",
    RefusalCode.RUN_EXISTS: "The subject already has a live run of this workflow.",
    RefusalCode.OWNED_FIELD: "The attribute is the owning workflow's state: read-only.",
    RefusalCode.MOVE_NOT_ALLOWED: "The move's guard, checklist or permission refuses it.",
    RefusalCode.NO_SLOT_WAITING: "No slot of the target waits for this event now.",
    RefusalCode.AMBIGUOUS_EVENT: "Several slots wait for the event; narrow the target.",
    RefusalCode.NOT_RAISER: (
        "The event's raisers (or the application's grants) do not include the caller."
    ),
    RefusalCode.RECIPIENT_NOT_ALLOWED: (
        "The slot's candidates and outsiders rule do not name this link recipient."
    ),
    RefusalCode.NOTHING_TO_CLAIM: "No open slot the caller may take matches.",
    RefusalCode.LINK_UNUSABLE: "The magic link cannot be used (any reason, told alike).",
    RefusalCode.LINKS_NOT_ALLOWED: "The slot's definition does not allow magic links.",
    RefusalCode.LINK_NOT_REQUESTED: (
        "The notification asks for no magic link (a principal's, or its reminder has no with_link)."
    ),
    RefusalCode.TOO_MANY_REQUESTS: "Too many unusable links from this client; wait.",
    RefusalCode.TIMER_NOT_DEAD: "Only a DEAD timer can be retried or discarded.",
    RefusalCode.STEP_NOT_PARKED: "Only a PARKED automatic step can be retried.",
    RefusalCode.CLOCKS_UNCHANGED: (
        "pauseClocks found no running clock, or resumeClocks no paused one."
    ),
    RefusalCode.TIMER_SPENT: "Only an armed or dead timer can be rescheduled.",
    RefusalCode.LEASE_LOST: (
        "The notification is no longer leased to the caller (the lease ran out and another "
        "sender took it, or it was marked already): do not mark it."
    ),
    RefusalCode.IDEMPOTENCY_KEY_REUSED: (
        "The idempotencyKey was used before for another input (or its first answer cannot "
        "be given again); use a new key."
    ),
    RefusalCode.BUSY: (
        "Others changed the same data at the same moment, again and again; nothing changed. "
        "Retryable: send the same request again after retryAfterSeconds."
    ),
    RefusalCode.DRY_RUN_TOO_LONG: (
        "An SLA dry run's timeline is beyond a cap (events, span or firings); see limit."
    ),
    RefusalCode.DRY_RUN_EVENT_REFUSED: (
        "An event of an SLA dry run cannot happen at that point; see index and reason."
    ),
    RefusalCode.OUTSIDE_RETENTION: (
        "The instant is older than the runs kept (retention): ask about one at or after "
        "facts.earliest."
    ),
    RefusalCode.NOT_UNDOABLE: (
        "The run's latest state change may not be undone (not marked undoable, made by the "
        "system, or it reached beyond the run); see reason."
    ),
    RefusalCode.NO_HISTORY: "The run has not changed state since it started: nothing to undo.",
    RefusalCode.UNDO_WINDOW_EXPIRED: "The window to undo the change has passed; see until.",
    RefusalCode.NOT_SAME_ACTOR: "Only the person who made the change may undo it; see actor.",
    RefusalCode.ON_LEAVE: "The principal is on leave now; see leaveFrom and leaveTo.",
    RefusalCode.AUTOMATION_INVALID: "The automation document has problems; see problems.",
    RefusalCode.ALREADY_CANDIDATE: "The slot already admits the principal or role to add.",
    RefusalCode.WORKSPACE_LIMIT_REACHED: (
        "The caller's workspace is at one of its limits (runs, open slots, requests per "
        "minute); see limit, allowed and current."
    ),
    RefusalCode.WORKSPACE_UNCHANGED: (
        "The workspace is in that status already (suspendWorkspace of a suspended one, "
        "resumeWorkspace of an active one); see status."
    ),
}


def core_enum(
    kind: type[E],
    *,
    name: str,
    description: str,
    values: dict[E, str],
    leave_out: Iterable[str] = (),
) -> type[E]:
    """Register core's enum ``kind`` as the GraphQL enum ``name``: the same members (but
    ``leave_out``), each with its description in ``values``. One list of members, in core."""
    strawberry.enum(kind, name=name, description=description)
    definition = kind.__strawberry_definition__  # type: ignore[attr-defined]
    skipped = set(leave_out)
    definition.values = [
        dataclasses.replace(value, description=values[kind(value.value)])
        for value in definition.values
        if value.value not in skipped
    ]
    return kind


core_enum(
    RefusalCode,
    name="RefusalCode",
    description="Why a mutation did not do what was asked.",
    values=CODE_DESCRIPTIONS,
    leave_out=PAGE_ONLY,
)


core_enum(
    RunStatus,
    name="RunStatus",
    description="Where a run stands.",
    values={
        RunStatus.ACTIVE: "Moving through its states.",
        RunStatus.COMPLETED: "Reached a terminal state.",
        RunStatus.CANCELLED: "Cancelled by someone.",
        RunStatus.SCHEDULED: "A delayed start (startRun's startAt): not started yet, its "
        "initial state not entered; the worker starts it at startAt. Cancel it with cancelRun.",
    },
)


core_enum(
    SlotStatus,
    name="SlotStatus",
    description="Where a slot stands.",
    values={
        SlotStatus.PENDING: "Waits for sibling slots (after).",
        SlotStatus.OPEN: "Anyone among its candidates may take it.",
        SlotStatus.CLAIMED: "Held by one principal.",
        SlotStatus.SATISFIED: "Its event was deposited.",
        SlotStatus.CANCELLED: "The run left the state first.",
        SlotStatus.EXPIRED: "Its expiry came before its event (outcome expired).",
    },
)


core_enum(
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


core_enum(
    ChildStatus,
    name="ChildStatus",
    description="Where a child run stands for its parent (docs/composition.md).",
    values={
        ChildStatus.STARTING: "Its parent entered the state: a worker starts it.",
        ChildStatus.LIVE: "It runs.",
        ChildStatus.CANCELLING: "Its parent was cancelled or left the state: a worker cancels it.",
        ChildStatus.ENDED: "It ended: a worker hands its outcome to the parent.",
        ChildStatus.SETTLED: "Done with: its parent read its outcome (or no longer waited).",
        ChildStatus.DETACHED: "An operator cut it loose: it runs on and resumes no one.",
    },
)


core_enum(
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


core_enum(
    DeliveryStatus,
    name="WebhookDeliveryState",
    description="Where a webhook delivery stands.",
    values={
        DeliveryStatus.PENDING: "Not delivered yet: waits for nextAttemptAt (or is being sent).",
        DeliveryStatus.DELIVERED: "The endpoint answered 2xx (see lastAttemptAt).",
        DeliveryStatus.DEAD: "Given up: a final answer (4xx other than 429, 3xx), or still "
        "failing past TASKFLOW_WEBHOOK_HORIZON. replayWebhookDeliveries sends it again.",
        DeliveryStatus.SKIPPED: "Not sent, never tried: when it was due, the endpoint's owner "
        "was deactivated or no longer granted the event's workflow (lastError starts with "
        "owner-deactivated or owner-lost-access). Not retried; replayWebhookDeliveries "
        "sends it once the owner may receive it again.",
    },
)


core_enum(
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


core_enum(
    WaitFor,
    name="WaitFor",
    description="What an awaited start (startRun's waitFor) waits for before it answers.",
    values={
        WaitFor.STATE: "The run left the state it started in (an automatic step or a timer "
        "moved it), or ended.",
        WaitFor.SLOT: "A slot of the run's current state is open or claimed (show it at once), "
        "or the run ended.",
        WaitFor.END: "The run ended.",
    },
)


# Core's reasons are the GraphQL enum AttentionReason, each described with what clears it.
core_enum(
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
        Reason.COMPENSATION_FAILED: "A saga step's compensation failed its last attempt: the "
        "step is not undone (detail names it). Undo it by hand.",
        Reason.AUTOMATION_STOPPED: "A published automation stopped acting: its author may no "
        "longer manage the workflow, or it met a loop (detail says which; the run is the one "
        "whose event it stopped on). Mend it, then publishAutomation again.",
        Reason.REPLICA_LAGGING: "The read replica (TASKFLOW_DATABASE_READ_URL) is further "
        "behind than TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS, or does not answer: reports and "
        "history read the primary meanwhile. Admins only; no run (runId, workflow and state "
        "are null). Mend the replica; it clears itself once back within the bound.",
        Reason.CALENDAR_FEED_FAILING: "A holiday feed fetched into the calendars folder "
        "keeps failing to refresh (detail names its file, the calendars that read it and the "
        "last error; since: its first failure in a row): they keep its last good copy. Admins "
        "only; no run. Mend the feed or fetch a copy by hand (taskflow calendar fetch-ics); it "
        "clears itself at the worker's next successful ask.",
    },
)


#: The GraphQL enum TimerState is core's ``TimerStatus``.
TimerState = TimerStatus


def state_of(status: str | None) -> TimerState | None:
    """The GraphQL state of a stored timer status (None stays None)."""
    return TimerStatus(status) if status else None
