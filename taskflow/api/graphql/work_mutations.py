"""Mutations of the work API. Each takes one input and returns success or a typed refusal."""

from __future__ import annotations

from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql import refusals as r
from taskflow.api.graphql import relay
from taskflow.api.graphql.context import Info, caller
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
from taskflow.service import events
from taskflow.service import runs as run_service
from taskflow.service import slots as slot_service


async def _slot(info: Info, local_id: str) -> SlotType:
    slot = await resolve_slot(info, local_id)
    assert slot is not None
    return slot


def _subject(row: Any) -> Subject:
    return Subject(
        type=row.type, external_id=row.external_id, attributes=cast(JSON, row.attributes)
    )


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
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | relay.Busy
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
    StartRunSuccess
    | r.RunExists
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | relay.Busy,
    strawberry.union("StartRunPayload", description="Result of startRun."),
]
UpdateSubjectPayload = Annotated[
    UpdateSubjectSuccess
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | r.MoveNotAllowed
    | relay.Busy,
    strawberry.union("UpdateSubjectPayload", description="Result of updateSubject."),
]
RaiseEventPayload = Annotated[
    RaiseEventSuccess | r.NoSlotWaiting | r.AmbiguousEvent | Refusals,
    strawberry.union("RaiseEventPayload", description="Result of raiseEvent."),
]
ClaimPayload = Annotated[
    SlotSuccess | Refusals, strawberry.union("ClaimPayload", description="Result of claim.")
]
ClaimNextPayload = Annotated[
    SlotSuccess | r.NothingToClaim | relay.InvalidInput | relay.Busy,
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
        me = await caller(info)
        try:
            started = await run_service.start_run(
                info.context.services,
                me,
                workflow=input.workflow,
                subject_type=input.subject.type,
                external_id=input.subject.external_id,
                attributes=_object(input.subject.attributes, "subject.attributes"),
                idempotency_key=input.idempotency_key,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return StartRunSuccess(run=RunType.of(started.run), created=started.created)

    @strawberry.mutation(
        description="Replace a subject's attributes; its runs re-check their rules."
    )
    async def update_subject(self, info: Info, input: UpdateSubjectArg) -> UpdateSubjectPayload:
        me = await caller(info)
        try:
            subject, run_ids = await run_service.update_subject(
                info.context.services,
                me,
                subject_type=input.type,
                external_id=input.external_id,
                attributes=_object(input.attributes, "attributes"),
            )
            found = await run_service.runs_by_ids(info.context.services, run_ids)
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return UpdateSubjectSuccess(
            subject=_subject(subject), runs=[RunType.of(found[i]) for i in run_ids if i in found]
        )

    @strawberry.mutation(description="Raise an event: it completes the one slot waiting for it.")
    async def raise_event(self, info: Info, input: RaiseEventArg) -> RaiseEventPayload:
        me = await caller(info)
        t = input.target
        try:
            target = events.EventTarget(
                run_id=relay.local_id(t.run_id, RUN, "target.runId") if t.run_id else None,
                subject_type=t.subject.type if t.subject else None,
                subject_external_id=t.subject.external_id if t.subject else None,
                correlation_key=t.correlation_key,
                slot_name=t.slot_name,
                item=t.item,
            )
            run, slot, new = await events.raise_event(
                info.context.services,
                me,
                event=input.event,
                payload=_object(input.payload, "payload") if input.payload is not None else None,
                target=target,
                idempotency_key=input.idempotency_key,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return RaiseEventSuccess(
            run=RunType.of(run), slot=await _slot(info, slot.id), duplicate=not new
        )

    @strawberry.mutation(description="Take an open slot for yourself.")
    async def claim(self, info: Info, input: ClaimArg) -> ClaimPayload:
        me = await caller(info)
        try:
            slot = await slot_service.claim(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                input.expected_version,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return SlotSuccess(slot=await _slot(info, slot.id))

    @strawberry.mutation(description="Take the most urgent open slot you may take.")
    async def claim_next(self, info: Info, input: ClaimNextArg) -> ClaimNextPayload:
        me = await caller(info)
        f = input.filter.to_filter() if input.filter else InboxFilter().to_filter()
        try:
            slot = await slot_service.claim_next(info.context.services, me, f)
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return SlotSuccess(slot=await _slot(info, slot.id))

    @strawberry.mutation(description="Put a claimed slot back in the pool (holder or delegate).")
    async def release(self, info: Info, input: ReleaseArg) -> ReleasePayload:
        me = await caller(info)
        try:
            slot = await slot_service.release(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                input.reason,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return SlotSuccess(slot=await _slot(info, slot.id))

    @strawberry.mutation(description="Hand a slot to a candidate (its holder or a delegate).")
    async def assign(self, info: Info, input: AssignArg) -> AssignPayload:
        me = await caller(info)
        try:
            slot = await slot_service.assign(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                input.to,
                input.expected_version,
                input.reason,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return SlotSuccess(slot=await _slot(info, slot.id))

    @strawberry.mutation(description="Complete a slot with its event's payload; the run moves on.")
    async def complete(self, info: Info, input: CompleteArg) -> CompletePayload:
        me = await caller(info)
        try:
            slot, run = await slot_service.complete(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                event=input.event,
                payload=_object(input.payload, "payload") if input.payload is not None else None,
                expected_version=input.expected_version,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return CompleteSuccess(slot=await _slot(info, slot.id), run=RunType.of(run))

    @strawberry.mutation(description="Make a manual move on a run (see Run.moves).")
    async def move(self, info: Info, input: MoveArg) -> MovePayload:
        me = await caller(info)
        try:
            run = await run_service.move(
                info.context.services,
                me,
                run_id=relay.local_id(input.run_id, RUN, "runId"),
                name=input.move,
                data=_object(input.input, "input") if input.input is not None else None,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return RunSuccess(run=RunType.of(run))

    @strawberry.mutation(description="Cancel a live run (leads, admins, applications).")
    async def cancel_run(self, info: Info, input: CancelRunArg) -> CancelRunPayload:
        me = await caller(info)
        try:
            run = await run_service.cancel_run(
                info.context.services,
                me,
                run_id=relay.local_id(input.run_id, RUN, "runId"),
                reason=input.reason,
            )
        except errors.TaskflowError as exc:
            return r.refusal_for(exc)
        return RunSuccess(run=RunType.of(run))


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise errors.ValidationError(f"{field} must be a JSON object.", field=field)
    return value
