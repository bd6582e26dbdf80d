"""Typed refusals of the work API: one GraphQL type per refusal code, with its facts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry

from taskflow import errors
from taskflow.api.graphql import relay
from taskflow.api.graphql.relay import Refusal, RefusalCode


@strawberry.type(description="The caller is not among the slot's candidates.")
class NotCandidate(Refusal):
    audience: str | None = strawberry.field(description="Who the slot is for, in words.")


@strawberry.type(description="Someone already holds the slot.")
class AlreadyClaimed(Refusal):
    holder: str | None = strawberry.field(description="The login of the holder.")
    claimed_at: datetime | None = strawberry.field(description="When they claimed it.")


@strawberry.type(description="Only the holder may do this.")
class NotHolder(Refusal):
    holder: str | None = strawberry.field(description="The login of the holder.")


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
class NoSlotWaiting(Refusal):
    event: str | None = strawberry.field(description="The event raised.")


@strawberry.type(description="Several slots wait for the event; narrow the target.")
class AmbiguousEvent(Refusal):
    slots: list[str] = strawberry.field(description="The waiting slots, as name[index].")


@strawberry.type(
    description="The event's raisers (or the application's grants) do not include the caller."
)
class NotRaiser(Refusal):
    event: str | None = strawberry.field(description="The event raised.")
    raisers: str | None = strawberry.field(
        description="Who may raise it, in words (null when an application's grant is missing)."
    )


@strawberry.type(description="No open slot the caller may take matches.")
class NothingToClaim(Refusal):
    pass


def _facts(error: errors.TaskflowError) -> dict[str, Any]:
    return error.facts


def refusal_for(error: errors.TaskflowError) -> Any:
    """The GraphQL refusal object for a domain error."""
    facts = _facts(error)
    code = error.code
    base: dict[str, Any] = {"message": error.message}
    if code == "NOT_CANDIDATE":
        return NotCandidate(code=RefusalCode.NOT_CANDIDATE, audience=facts.get("audience"), **base)
    if code == "ALREADY_CLAIMED":
        claimed = facts.get("claimed_at")
        return AlreadyClaimed(
            code=RefusalCode.ALREADY_CLAIMED,
            holder=facts.get("holder"),
            claimed_at=datetime.fromisoformat(claimed) if claimed else None,
            **base,
        )
    if code == "NOT_HOLDER":
        return NotHolder(code=RefusalCode.NOT_HOLDER, holder=facts.get("holder"), **base)
    if code == "NOT_DELEGATE":
        return NotDelegate(code=RefusalCode.NOT_DELEGATE, delegates=facts.get("delegates"), **base)
    if code == "SLOT_NOT_OPEN":
        return SlotNotOpen(code=RefusalCode.SLOT_NOT_OPEN, status=facts.get("status"), **base)
    if code == "STALE_VERSION":
        return StaleVersion(
            code=RefusalCode.STALE_VERSION,
            current_version=facts.get("current_version"),
            current_state=facts.get("current_state"),
            **base,
        )
    if code == "PAYLOAD_INVALID":
        problems = [
            FieldProblem(field=p["field"], reason=p["reason"]) for p in facts.get("problems", [])
        ]
        return PayloadInvalid(code=RefusalCode.PAYLOAD_INVALID, problems=problems, **base)
    if code == "WRONG_EVENT":
        return WrongEvent(code=RefusalCode.WRONG_EVENT, waits_for=facts.get("waits_for"), **base)
    if code == "RUN_NOT_ACTIVE":
        return RunNotActive(code=RefusalCode.RUN_NOT_ACTIVE, status=facts.get("status"), **base)
    if code == "RUN_EXISTS":
        run_id = facts.get("run_id")
        return RunExists(
            code=RefusalCode.RUN_EXISTS,
            run_id=strawberry.ID(relay.to_global_id("Run", run_id)) if run_id else None,
            **base,
        )
    if code == "MOVE_NOT_ALLOWED":
        return MoveNotAllowed(
            code=RefusalCode.MOVE_NOT_ALLOWED, reasons=facts.get("reasons", []), **base
        )
    if code == "NO_SLOT_WAITING":
        return NoSlotWaiting(code=RefusalCode.NO_SLOT_WAITING, event=facts.get("event"), **base)
    if code == "AMBIGUOUS_EVENT":
        return AmbiguousEvent(
            code=RefusalCode.AMBIGUOUS_EVENT, slots=facts.get("slots", []), **base
        )
    if code == "NOT_RAISER":
        return NotRaiser(
            code=RefusalCode.NOT_RAISER,
            event=facts.get("event"),
            raisers=facts.get("raisers"),
            **base,
        )
    if code == "NOTHING_TO_CLAIM":
        return NothingToClaim(code=RefusalCode.NOTHING_TO_CLAIM, **base)
    return relay.refusal_for(error)
