"""Typed refusals in GraphQL: one type per refusal class, chosen by a table.

A use case raises a refusal class (``taskflow.core.refusals``, or one of the
``taskflow.errors`` children a client can mend: invalid input, not found, forbidden,
busy); :data:`TABLE` maps each class to the builder of its GraphQL type (the nearest
class in the error's MRO wins). An untyped ``TaskflowError(code=...)`` is first made
typed by its code (``core.refusals.typed``). Internal errors (``errors.InternalError``,
e.g. the engine's) are never refusals: :func:`refusal_for` raises them again and the
schema's error shaping masks them with the request id.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import strawberry

from taskflow import errors
from taskflow.api.graphql import relay
from taskflow.api.graphql.enums import TimerState, state_of
from taskflow.api.graphql.relay import Refusal, RefusalCode
from taskflow.core import refusals as core
from taskflow.core.definition.fields import PayloadError


@strawberry.type(description="The caller is not among the slot's candidates.")
class NotCandidate(Refusal):
    audience: str | None = strawberry.field(description="Who the slot is for, in words.")


# Bases that only share fact fields; the schema never names them.
@strawberry.type
class _HolderFact(Refusal):
    holder: str | None = strawberry.field(description="The login of the holder.")


@strawberry.type
class _EventFact(Refusal):
    event: str | None = strawberry.field(description="The event raised.")


@strawberry.type
class _TimerStateFact(Refusal):
    state: TimerState | None = strawberry.field(description="The timer's state now.")


@strawberry.type(description="Someone already holds the slot.")
class AlreadyClaimed(_HolderFact):
    claimed_at: datetime | None = strawberry.field(description="When they claimed it.")


@strawberry.type(description="Only the holder may do this.")
class NotHolder(_HolderFact):
    pass


@strawberry.type(description="Only the holder or a delegate may hand the slot over.")
class NotDelegate(Refusal):
    delegates: str | None = strawberry.field(description="Who the delegates are, in words.")


@strawberry.type(description="The slot is not open any more.")
class SlotNotOpen(Refusal):
    status: str | None = strawberry.field(description="The slot's status now.")


@strawberry.type(description="The slot or run changed since the caller loaded it.")
class StaleVersion(Refusal):
    current_version: int | None = strawberry.field(
        description="The slot's version now (the run's, for move and cancelRun)."
    )
    current_state: str | None = strawberry.field(
        default=None,
        description="For move and cancelRun: the state the run is in now (null for slots).",
    )


@strawberry.type(description="One field of a payload and why it was refused.")
class FieldProblem:
    field: str = strawberry.field(description="The payload field.")
    reason: str = strawberry.field(description="What is wrong with it.")


@strawberry.type(description="The payload does not fit the slot's fields.")
class PayloadInvalid(Refusal):
    problems: list[FieldProblem] = strawberry.field(description="Every field at fault.")


@strawberry.type(description="The slot waits for another event.")
class WrongEvent(Refusal):
    waits_for: str | None = strawberry.field(description="The event the slot waits for.")


@strawberry.type(description="The run has ended.")
class RunNotActive(Refusal):
    status: str | None = strawberry.field(description="The run's status.")


@strawberry.type(description="The subject already has a live run of this workflow.")
class RunExists(Refusal):
    run_id: strawberry.ID | None = strawberry.field(description="Global id of the live run.")


@strawberry.type(description="The move may not be made now.")
class MoveNotAllowed(Refusal):
    reasons: list[str] = strawberry.field(description="Each reason, in words.")


@strawberry.type(description="No slot of the target waits for this event now.")
class NoSlotWaiting(_EventFact):
    pass


@strawberry.type(description="Several slots wait for the event; narrow the target.")
class AmbiguousEvent(Refusal):
    slots: list[str] = strawberry.field(description="The waiting slots, as name[index].")


@strawberry.type(
    description="The event's raisers (or the application's grants) do not include the caller."
)
class NotRaiser(_EventFact):
    raisers: str | None = strawberry.field(
        description="Who may raise it, in words (null when an application's grant is missing)."
    )


@strawberry.type(description="No open slot the caller may take matches.")
class NothingToClaim(Refusal):
    pass


@strawberry.type(description="The link cannot be used (whatever the reason; staff see it).")
class LinkUnusable(Refusal):
    pass


@strawberry.type(description="The slot's definition does not let a magic link complete it.")
class LinksNotAllowed(Refusal):
    pass


@strawberry.type(
    description="The recipient is not among the slot's candidates (e-mail addresses) and its "
    "outsiders rule does not admit them either."
)
class RecipientNotAllowed(Refusal):
    pass


@strawberry.type(description="Too many unusable links from this client; wait, then try again.")
class TooManyRequests(Refusal):
    retry_after_seconds: int = strawberry.field(description="Seconds to wait before trying.")


@strawberry.type(description="The notification requests no magic link.")
class LinkNotRequested(Refusal):
    pass


@strawberry.type(description="pauseClocks found no running clock, or resumeClocks no paused one.")
class ClocksUnchanged(Refusal):
    pass


@strawberry.type(description="Only an armed or dead timer can be rescheduled.")
class TimerSpent(_TimerStateFact):
    pass


@strawberry.type(description="Only a dead timer can be retried or discarded.")
class TimerNotDead(_TimerStateFact):
    pass


@strawberry.type(description="The notification is not leased to the caller any more.")
class LeaseLost(Refusal):
    pass


@strawberry.type(description="Only a PARKED automatic step can be retried.")
class StepNotParked(Refusal):
    status: str | None = strawberry.field(description="The step's status now (lower case).")


# -- the table -----------------------------------------------------------------------------------

Build = Callable[[Any], Refusal]


def _plain(kind: type[Refusal], code: RefusalCode, *facts: str) -> Build:
    """A builder of a refusal type whose fact fields bear the same names as the refusal
    class's attributes (none: only code and message)."""
    return lambda e: kind(code=code, message=e.message, **{f: getattr(e, f) for f in facts})


def _payload_invalid(e: errors.TaskflowError) -> Refusal:
    problems = [FieldProblem(field=p["field"], reason=p["reason"]) for p in e.facts["problems"]]
    return PayloadInvalid(code=RefusalCode.PAYLOAD_INVALID, message=e.message, problems=problems)


def _run_exists(e: core.RunExists) -> Refusal:
    run_id = relay.node_id("Run", e.run_id)
    return RunExists(code=RefusalCode.RUN_EXISTS, message=e.message, run_id=run_id)


def _invalid_input(e: errors.TaskflowError) -> Refusal:
    return relay.InvalidInput(
        code=RefusalCode.INVALID_INPUT, message=e.message, field=e.facts.get("field")
    )


def _timer(kind: type[_TimerStateFact], code: RefusalCode) -> Build:
    """A builder of a timer refusal: the status as the API's timer state."""
    return lambda e: kind(code=code, message=e.message, state=state_of(e.status))


C = RefusalCode
#: The GraphQL refusal of each refusal class (the nearest class in an error's MRO wins).
TABLE: dict[type[errors.TaskflowError], Build] = {
    core.NotCandidate: _plain(NotCandidate, C.NOT_CANDIDATE, "audience"),
    core.AlreadyClaimed: _plain(AlreadyClaimed, C.ALREADY_CLAIMED, "holder", "claimed_at"),
    core.NotHolder: _plain(NotHolder, C.NOT_HOLDER, "holder"),
    core.NotDelegate: _plain(NotDelegate, C.NOT_DELEGATE, "delegates"),
    core.SlotNotOpen: _plain(SlotNotOpen, C.SLOT_NOT_OPEN, "status"),
    core.StaleVersion: _plain(StaleVersion, C.STALE_VERSION, "current_version", "current_state"),
    core.PayloadInvalid: _payload_invalid,
    PayloadError: _payload_invalid,
    core.WrongEvent: _plain(WrongEvent, C.WRONG_EVENT, "waits_for"),
    core.RunNotActive: _plain(RunNotActive, C.RUN_NOT_ACTIVE, "status"),
    core.RunExists: _run_exists,
    core.MoveNotAllowed: lambda e: MoveNotAllowed(
        code=C.MOVE_NOT_ALLOWED, message=e.message, reasons=e.reasons or []
    ),
    core.NoSlotWaiting: _plain(NoSlotWaiting, C.NO_SLOT_WAITING, "event"),
    core.AmbiguousEvent: lambda e: AmbiguousEvent(
        code=C.AMBIGUOUS_EVENT, message=e.message, slots=e.slots or []
    ),
    core.NotRaiser: _plain(NotRaiser, C.NOT_RAISER, "event", "raisers"),
    core.NothingToClaim: _plain(NothingToClaim, C.NOTHING_TO_CLAIM),
    core.LinkUnusable: _plain(LinkUnusable, C.LINK_UNUSABLE),
    core.LinksNotAllowed: _plain(LinksNotAllowed, C.LINKS_NOT_ALLOWED),
    core.RecipientNotAllowed: _plain(RecipientNotAllowed, C.RECIPIENT_NOT_ALLOWED),
    core.LinkNotRequested: _plain(LinkNotRequested, C.LINK_NOT_REQUESTED),
    core.Throttled: lambda e: TooManyRequests(
        code=C.TOO_MANY_REQUESTS, message=e.message, retry_after_seconds=e.retry_after or 60
    ),
    core.ClocksUnchanged: _plain(ClocksUnchanged, C.CLOCKS_UNCHANGED),
    core.TimerSpent: _timer(TimerSpent, C.TIMER_SPENT),
    core.TimerNotDead: _timer(TimerNotDead, C.TIMER_NOT_DEAD),
    core.LeaseLost: _plain(LeaseLost, C.LEASE_LOST),
    core.StepNotParked: _plain(StepNotParked, C.STEP_NOT_PARKED, "status"),
    core.IdempotencyKeyReused: _plain(relay.IdempotencyKeyReused, C.IDEMPOTENCY_KEY_REUSED),
    errors.Busy: lambda e: relay.Busy(
        code=C.BUSY,
        message=e.message,
        retry_after_seconds=int(e.facts.get("retry_after_seconds", 1)),
    ),
    errors.Forbidden: _plain(relay.NotAllowed, C.FORBIDDEN),
    errors.NotFound: _plain(relay.NotFoundRefusal, C.NOT_FOUND),
    errors.ValidationError: _invalid_input,
    # A TaskflowError whose code names no refusal (raised by code not converted yet, or a
    # child of TaskflowError with no entry): the input was refused, as it always was.
    errors.TaskflowError: _invalid_input,
}
#: Errors that are never a client's refusal: raised again, then masked (see api/graphql/errors).
NOT_REFUSALS: tuple[type[errors.TaskflowError], ...] = (
    errors.InternalError,
    errors.AuthenticationError,
)


def refusal_for(error: errors.TaskflowError) -> Any:
    """The GraphQL refusal (payload union member) of a use case's error; an internal error or
    a failed authentication is raised again (a top-level GraphQL error)."""
    if isinstance(error, NOT_REFUSALS):
        raise error
    found = core.typed(error)
    for cls in type(found).__mro__:
        build = TABLE.get(cls)
        if build is not None:
            return build(found)
    raise error  # not reached: TaskflowError is in the table
