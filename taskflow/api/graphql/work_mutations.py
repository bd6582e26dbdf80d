"""Mutations of the work API. Each takes one input and returns success or a typed refusal."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import strawberry

from taskflow import errors
from taskflow.api.graphql import keyed, relay
from taskflow.api.graphql import refusals as r
from taskflow.api.graphql.context import Info, checked
from taskflow.api.graphql.types import RUN, SLOT, RunType, SlotType, Subject
from taskflow.api.graphql.work import InboxFilter, resolve_slot
from taskflow.api.graphql.work_inputs import (
    AssignArg,
    CancelRunArg,
    ClaimArg,
    ClaimNextArg,
    CompleteArg,
    MoveArg,
    RaiseEventArg,
    ReleaseArg,
    StartRunArg,
    UpdateSubjectArg,
)
from taskflow.core.principals import Principal
from taskflow.service import events
from taskflow.service import runs as run_service
from taskflow.service import slots as slot_service


async def _slot(info: Info, local_id: str) -> SlotType:
    slot = await resolve_slot(info, local_id)
    if slot is None:  # a replayed answer's slot the caller may no longer see
        raise errors.NotFound(f"No Slot has the id {local_id!r} that you may see now.")
    return slot


Refusals = (
    r.NotCandidate
    | r.AlreadyClaimed
    | r.NotHolder
    | r.NotDelegate
    | r.SlotNotOpen
    | r.StaleVersion
    | r.PayloadInvalid
    | r.WrongEvent
    | r.RunNotActive
    | r.MoveNotAllowed
    | relay.Common
)


# -- successes ---------------------------------------------------------------------------------


@strawberry.type(description="The run was started, or returned again for the same idempotency key.")
class StartRunSuccess:
    run: RunType = strawberry.field(description="The run.")
    created: bool = strawberry.field(description="False when an earlier start is returned again.")


@strawberry.type(description="The subject was updated; its live runs re-checked their rules.")
class UpdateSubjectSuccess:
    subject: Subject = strawberry.field(description="The subject as stored.")
    runs: list[RunType] = strawberry.field(description="Its live runs, as they stand now.")


@strawberry.type(description="The event completed a slot.")
class RaiseEventSuccess:
    run: RunType = strawberry.field(description="The run, as it stands now.")
    slot: SlotType = strawberry.field(description="The slot the event completed.")
    duplicate: bool = strawberry.field(description="True when an earlier raise is returned again.")


@strawberry.type(
    description="No slot waited for the event, and its workflow buffers it: the run keeps it "
    "and delivers it, in arrival order, to the first matching slot that opens before it expires "
    "(timeline: event.buffered, then event.delivered or event.expired)."
)
class RaiseEventBuffered:
    run: RunType = strawberry.field(description="The run that keeps the event.")
    # Nullable like the refusals' ``event``, so one selection can ask both (never null here).
    event: str | None = strawberry.field(description="The event kept (always given).")
    arrived_at: datetime = strawberry.field(description="When it arrived.")
    expires_at: datetime = strawberry.field(
        description="When it is dropped if no matching slot has opened by then."
    )
    duplicate: bool = strawberry.field(
        description="True when an earlier raise with the same idempotency key is returned again."
    )


@strawberry.type(description="The slot changed hands (claimed, released or assigned).")
class SlotSuccess:
    slot: SlotType = strawberry.field(description="The slot as it stands now.")


@strawberry.type(description="The slot was completed.")
class CompleteSuccess:
    slot: SlotType = strawberry.field(description="The completed slot.")
    run: RunType = strawberry.field(description="The run, as it stands now.")


@strawberry.type(description="The run moved or was cancelled.")
class RunSuccess:
    run: RunType = strawberry.field(description="The run, as it stands now.")


StartRunPayload = Annotated[
    StartRunSuccess | r.RunExists | relay.Common,
    strawberry.union("StartRunPayload", description="Result of startRun."),
]
UpdateSubjectPayload = Annotated[
    UpdateSubjectSuccess
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | r.MoveNotAllowed
    | relay.IdempotencyKeyReused
    | relay.Busy,
    strawberry.union("UpdateSubjectPayload", description="Result of updateSubject."),
]
RaiseEventPayload = Annotated[
    RaiseEventSuccess
    | RaiseEventBuffered
    | r.NoSlotWaiting
    | r.AmbiguousEvent
    | r.NotRaiser
    | Refusals,
    strawberry.union("RaiseEventPayload", description="Result of raiseEvent."),
]
ClaimPayload = Annotated[
    SlotSuccess | Refusals, strawberry.union("ClaimPayload", description="Result of claim.")
]
ClaimNextPayload = Annotated[
    SlotSuccess | r.NothingToClaim | relay.InvalidInput | relay.IdempotencyKeyReused | relay.Busy,
    strawberry.union("ClaimNextPayload", description="Result of claimNext."),
]
ReleasePayload = Annotated[
    SlotSuccess | Refusals, strawberry.union("ReleasePayload", description="Result of release.")
]
AssignPayload = Annotated[
    SlotSuccess | Refusals, strawberry.union("AssignPayload", description="Result of assign.")
]
CompletePayload = Annotated[
    CompleteSuccess | Refusals,
    strawberry.union("CompletePayload", description="Result of complete."),
]
MovePayload = Annotated[
    RunSuccess | Refusals, strawberry.union("MovePayload", description="Result of move.")
]
CancelRunPayload = Annotated[
    RunSuccess | Refusals, strawberry.union("CancelRunPayload", description="Result of cancelRun.")
]


@strawberry.type
class WorkMutations:
    @strawberry.mutation(description="Start a run of a workflow for a subject (applications).")
    async def start_run(self, info: Info, input: StartRunArg) -> StartRunPayload:
        async def work(me: Principal) -> keyed.Answer:
            started = await run_service.start_run(
                info.context.services,
                me,
                workflow=input.workflow,
                version=input.version,
                subject_type=input.subject.type,
                external_id=input.subject.external_id,
                attributes=_object(input.subject.attributes, "subject.attributes"),
                idempotency_key=input.idempotency_key,
            )
            return {"run": started.run.view.id, "created": started.created}

        async def build(info: Info, _: Principal, a: keyed.Answer, again: bool) -> StartRunSuccess:
            return StartRunSuccess(
                run=await _run(info, a["run"]), created=a["created"] and not again
            )

        return await keyed.answer(info, "startRun", input, work, build)

    @strawberry.mutation(
        description="Replace a subject's attributes; its runs re-check their rules."
    )
    async def update_subject(self, info: Info, input: UpdateSubjectArg) -> UpdateSubjectPayload:
        async def work(me: Principal) -> keyed.Answer:
            subject, run_ids = await run_service.update_subject(
                info.context.services,
                me,
                subject_type=input.type,
                external_id=input.external_id,
                attributes=_object(input.attributes, "attributes"),
            )
            return {
                "subject": [subject.type, subject.external_id, subject.attributes],
                "runs": list(run_ids),
            }

        return await keyed.answer(info, "updateSubject", input, work, _subject_success)

    @strawberry.mutation(
        description="Raise an event: it completes the one slot waiting for it (staff obey the "
        "holder and candidate rules of complete; the event's declared raisers apply to "
        "everyone). When no slot waits and the workflow buffers the event, the run keeps it."
    )
    async def raise_event(self, info: Info, input: RaiseEventArg) -> RaiseEventPayload:
        t = input.target

        async def work(me: Principal) -> keyed.Answer:
            target = events.EventTarget(
                run_id=relay.local_id(t.run_id, RUN, "target.runId") if t.run_id else None,
                subject_type=t.subject.type if t.subject else None,
                subject_external_id=t.subject.external_id if t.subject else None,
                correlation_key=t.correlation_key,
                slot_name=t.slot_name,
                item=t.item,
            )
            raised = await events.raise_event(
                info.context.services,
                me,
                event=input.event,
                payload=_payload(input.payload),
                target=target,
            )
            if raised.buffered is not None:
                kept = raised.buffered
                return {
                    "run": raised.run.view.id,
                    "kept": [kept.event, kept.arrived_at.isoformat(), kept.expires_at.isoformat()],
                }
            assert raised.slot is not None
            return {"run": raised.run.view.id, "slot": raised.slot.id}

        return await keyed.answer(info, "raiseEvent", input, work, _raised)

    @strawberry.mutation(description="Take an open slot for yourself.")
    async def claim(self, info: Info, input: ClaimArg) -> ClaimPayload:
        async def work(me: Principal) -> keyed.Answer:
            slot_id = relay.local_id(input.slot_id, SLOT, "slotId")
            slot = await slot_service.claim(
                info.context.services, me, slot_id, input.expected_version, await checked(info)
            )
            return {"slot": slot.id}

        return await keyed.answer(info, "claim", input, work, _slot_success)

    @strawberry.mutation(description="Take the most urgent open slot you may take.")
    async def claim_next(self, info: Info, input: ClaimNextArg) -> ClaimNextPayload:
        f = input.filter.to_filter() if input.filter else InboxFilter().to_filter()

        async def work(me: Principal) -> keyed.Answer:
            slot = await slot_service.claim_next(info.context.services, me, f, await checked(info))
            return {"slot": slot.id}

        return await keyed.answer(info, "claimNext", input, work, _slot_success)

    @strawberry.mutation(description="Put a claimed slot back in the pool (holder or delegate).")
    async def release(self, info: Info, input: ReleaseArg) -> ReleasePayload:
        async def work(me: Principal) -> keyed.Answer:
            slot_id = relay.local_id(input.slot_id, SLOT, "slotId")
            slot = await slot_service.release(
                info.context.services, me, slot_id, input.reason, await checked(info)
            )
            return {"slot": slot.id}

        return await keyed.answer(info, "release", input, work, _slot_success)

    @strawberry.mutation(description="Hand a slot to a candidate (its holder or a delegate).")
    async def assign(self, info: Info, input: AssignArg) -> AssignPayload:
        async def work(me: Principal) -> keyed.Answer:
            slot = await slot_service.assign(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                input.to,
                input.expected_version,
                input.reason,
                await checked(info),
            )
            return {"slot": slot.id}

        return await keyed.answer(info, "assign", input, work, _slot_success)

    @strawberry.mutation(description="Complete a slot with its event's payload; the run moves on.")
    async def complete(self, info: Info, input: CompleteArg) -> CompletePayload:
        async def work(me: Principal) -> keyed.Answer:
            slot, run = await slot_service.complete(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                event=input.event,
                payload=_payload(input.payload),
                expected_version=input.expected_version,
            )
            return {"slot": slot.id, "run": run.view.id}

        return await keyed.answer(info, "complete", input, work, _completed)

    @strawberry.mutation(description="Make a manual move on a run (see Run.moves).")
    async def move(self, info: Info, input: MoveArg) -> MovePayload:
        async def work(me: Principal) -> keyed.Answer:
            run = await run_service.move(
                info.context.services,
                me,
                run_id=relay.local_id(input.run_id, RUN, "runId"),
                name=input.move,
                data=_object(input.input, "input") if input.input is not None else None,
                expected_version=input.expected_version,
            )
            return {"run": run.view.id}

        return await keyed.answer(info, "move", input, work, run_success)

    @strawberry.mutation(description="Cancel a live run (leads, admins, applications).")
    async def cancel_run(self, info: Info, input: CancelRunArg) -> CancelRunPayload:
        async def work(me: Principal) -> keyed.Answer:
            run = await run_service.cancel_run(
                info.context.services,
                me,
                run_id=relay.local_id(input.run_id, RUN, "runId"),
                reason=input.reason,
                expected_version=input.expected_version,
            )
            return {"run": run.view.id}

        return await keyed.answer(info, "cancelRun", input, work, run_success)


# -- successes from the answers' ids ---------------------------------------------------------------


async def _subject_success(
    info: Info, _: Principal, answer: keyed.Answer, __: bool
) -> UpdateSubjectSuccess:
    found = await run_service.runs_by_ids(info.context.services, answer["runs"])
    kind, external_id, attributes = answer["subject"]
    return UpdateSubjectSuccess(
        subject=Subject.of(kind, external_id, attributes),
        runs=[RunType.of(found[i]) for i in answer["runs"] if i in found],
    )


async def _raised(
    info: Info, _: Principal, answer: keyed.Answer, again: bool
) -> RaiseEventSuccess | RaiseEventBuffered:
    if "kept" in answer:
        event, arrived_at, expires_at = answer["kept"]
        return RaiseEventBuffered(
            run=await _run(info, answer["run"]),
            event=event,
            arrived_at=datetime.fromisoformat(arrived_at),
            expires_at=datetime.fromisoformat(expires_at),
            duplicate=again,
        )
    return RaiseEventSuccess(
        run=await _run(info, answer["run"]),
        slot=await _slot(info, answer["slot"]),
        duplicate=again,
    )


async def _run(info: Info, run_id: str) -> RunType:
    """The run as it stands now (a replayed answer shows the run's present state)."""
    found = await run_service.runs_by_ids(info.context.services, [run_id])
    if run_id not in found:
        raise errors.NotFound(f"No Run has the id {run_id!r}.")
    return RunType.of(found[run_id])


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise errors.ValidationError(f"{field} must be a JSON object.", field=field)
    return value


def _payload(value: Any) -> dict[str, Any] | None:
    return _object(value, "payload") if value is not None else None


_slot_success = keyed.built(SlotSuccess, slot=_slot)
#: ``RunSuccess`` with the run as it stands now (shared with the operator verbs).
run_success = keyed.built(RunSuccess, run=_run)
_completed = keyed.built(CompleteSuccess, slot=_slot, run=_run)
