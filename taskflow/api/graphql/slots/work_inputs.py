"""Inputs of the work API's mutations, and the argument each mutation takes."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.enums import WaitFor
from taskflow.api.graphql.common.targets import OnRun, OnSlot
from taskflow.api.graphql.slots.work import InboxFilter
from taskflow.core.definition import budgets
from taskflow.core.runs import scheduling


@strawberry.input(description="The tracked entity a run is about.")
class SubjectInput:
    type: str = strawberry.field(description="Its type; must be what the workflow tracks.")
    external_id: str = strawberry.field(description="The application's id for it.")
    attributes: JSON = strawberry.field(description="Its data (a JSON object).")


@strawberry.input(
    description="A duration: exactly one of minutes, hours, days; real time, or working time "
    "on a business calendar."
)
class DelayInput:
    minutes: float | None = strawberry.field(default=None, description="Minutes.")
    hours: float | None = strawberry.field(default=None, description="Hours.")
    days: float | None = strawberry.field(
        default=None, description="Days (business: working days of the calendar)."
    )
    business: bool = strawberry.field(
        default=False, description="Count working time on the calendar, not real time."
    )
    calendar: str | None = strawberry.field(
        default=None,
        description="The business calendar (default: the workflow's); only with business.",
    )


@strawberry.input(description="When a delayed start starts: exactly one of instant, after.")
class StartAtInput:
    instant: datetime | None = strawberry.field(
        default=None, description="An instant, with its offset (past or now: at once)."
    )
    after: DelayInput | None = strawberry.field(default=None, description="A duration from now.")


@strawberry.input(description="Start a run of a workflow for a subject.")
class StartRunInput:
    workflow: str = strawberry.field(description="The workflow's name.")
    subject: SubjectInput = strawberry.field(description="The tracked entity.")
    version: int | None = strawberry.field(
        default=None,
        description="The workflow version to start (default: the latest loaded). Runs stay "
        "on the version they started on until they end.",
    )
    idempotency_key: str | None = strawberry.field(
        default=None,
        description="Repeat it to get the same run back instead of a refusal: a start of the "
        "same subject and workflow with the same key returns the run it made (whoever sends "
        "it); from the same caller, the same key with another input is refused "
        "(IdempotencyKeyReused). Kept with the run; the caller's copy 7 days.",
    )
    start_at: StartAtInput | None = strawberry.field(
        default=None,
        description="Start later: the run is SCHEDULED (listed, cancellable with cancelRun, "
        "the subject's live run) until then, and the worker starts it exactly once. At most "
        "366 days ahead.",
    )
    wait_for: WaitFor | None = strawberry.field(
        default=None,
        description="Answer once the run is there (or timeoutSeconds passed), not at once: "
        "e.g. SLOT, to show the first slot after the worker ran the automatic steps before "
        "it. Nothing is held while waiting; the answer is the run as it stands then "
        "(StartRunSuccess.reached says whether it got there).",
    )
    timeout_seconds: int | None = strawberry.field(
        default=None,
        description="The longest wait for waitFor, in seconds: 1 to 30 (default 10); more is "
        "refused (InvalidInput) and starts nothing.",
    )


@strawberry.input(description="A subject by its type and external id.")
class SubjectRefInput:
    type: str = strawberry.field(description="Its type.")
    external_id: str = strawberry.field(description="The application's id for it.")


@strawberry.input(description="Replace a tracked entity's attributes.")
class UpdateSubjectInput(SubjectRefInput):
    attributes: JSON = strawberry.field(description="Its new data (replaces the old).")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(
    description="Create a tracked entity, or replace its attributes: a new subject of a type a "
    "workflow owns starts that workflow's run."
)
class UpsertSubjectInput(SubjectRefInput):
    attributes: JSON = strawberry.field(
        description="Its data (replaces the old); never the owned field (read-only)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Where an event goes: exactly one of runId, subject, correlationKey.")
class EventTargetInput:
    run_id: strawberry.ID | None = strawberry.field(default=None, description="A run's global id.")
    subject: SubjectRefInput | None = strawberry.field(
        default=None, description="Its subject's live runs."
    )
    correlation_key: str | None = strawberry.field(
        default=None, description="A key the sender knows (the workflow's correlate_by field)."
    )
    slot_name: str | None = strawberry.field(
        default=None, description="When several slots wait for the event: this slot."
    )
    item: JSON | None = strawberry.field(
        default=None, description="When several foreach slots wait: the one for this element."
    )


@strawberry.input(description="Raise an event on a run.")
class RaiseEventInput:
    event: str = strawberry.field(description="The event's name (what a slot waits for).")
    payload: JSON | None = strawberry.field(
        default=None, description="Its payload (a JSON object)."
    )
    target: EventTargetInput = strawberry.field(description="Where it goes.")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version you saw (with target.runId only); refused "
        "(STALE_VERSION) if it changed since.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Claim an open slot.")
class ClaimInput(OnSlot):
    expected_version: int | None = strawberry.field(
        default=None, description="Refuse if the slot changed since this version was read."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Claim the most urgent open slot you may take.")
class ClaimNextInput:
    filter: InboxFilter | None = strawberry.field(default=None, description="Only among these.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Put a claimed slot back in the pool.")
class ReleaseInput(OnSlot):
    reason: str | None = strawberry.field(default=None, description="Why, for the timeline.")
    expected_version: int | None = strawberry.field(default=None, description="Guard, as in claim.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Hand a slot to someone.")
class AssignInput(OnSlot):
    to: str = strawberry.field(description="The login of the new holder (a candidate).")
    expected_version: int | None = strawberry.field(default=None, description="Guard, as in claim.")
    reason: str | None = strawberry.field(default=None, description="Why, for the timeline.")
    force: bool = strawberry.field(
        default=False,
        description="True: hand it over even when the new holder is on leave (OnLeave otherwise).",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Complete a slot with its event's payload.")
class CompleteInput(OnSlot):
    event: str | None = strawberry.field(
        default=None, description="The slot's event (checked if given)."
    )
    payload: JSON | None = strawberry.field(
        default=None, description="The payload (see Slot.fields)."
    )
    expected_version: int | None = strawberry.field(default=None, description="Guard, as in claim.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Make a manual move on a run.")
class MoveInput(OnRun):
    move: str = strawberry.field(description="The move's name (see Run.moves).")
    input: JSON | None = strawberry.field(default=None, description="The move's fields, if any.")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version as you saw it (Run.version, e.g. on a board card): "
        "refused with StaleVersion if the run changed since. Omit to move whatever it is now.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Cancel a live run.")
class CancelRunInput(OnRun):
    reason: str = strawberry.field(description="Why, for the timeline.")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version as you saw it (Run.version): refused with StaleVersion "
        "if the run changed since. Omit to cancel whatever it is now.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


def delayed(start_at: StartAtInput | None, wait_for: WaitFor | None) -> scheduling.Delay | None:
    """``startAt`` as the core reads it (checked when the run starts: ``scheduling``)."""
    if start_at is None:
        return None
    if wait_for is not None:
        raise errors.ValidationError(
            "A delayed start (startAt) cannot be awaited (waitFor): start it, then read the run "
            "when it is due.",
            field="waitFor",
        )
    after = start_at.after
    if after is None:
        return scheduling.Delay(at=start_at.instant)
    units = [
        (u, a)
        for u, a in (("minutes", after.minutes), ("hours", after.hours), ("days", after.days))
        if a is not None
    ]
    if len(units) != 1:
        raise errors.ValidationError(
            "startAt.after takes exactly one of minutes, hours, days.", field="startAt.after"
        )
    if after.calendar is not None and not after.business:
        raise errors.ValidationError(
            "startAt.after.calendar counts working time: give business: true too.",
            field="startAt.after.calendar",
        )
    (unit, amount), kind = units[0], "business" if after.business else "real"
    budget = budgets.Budget(kind, amount, unit, after.calendar)  # type: ignore[arg-type]
    return scheduling.Delay(at=start_at.instant, after=budget)
