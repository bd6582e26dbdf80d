"""Mutations of the work API. Each takes one input and returns success or a typed refusal."""

from __future__ import annotations

from typing import Annotated

import strawberry

from taskflow.api.graphql import keyed, relay
from taskflow.api.graphql import refusals as r
from taskflow.api.graphql.context import Info, checked
from taskflow.api.graphql.types import RUN, SLOT
from taskflow.api.graphql.work import InboxFilter
from taskflow.api.graphql.work_answers import (
    CompleteSuccess,
    RaiseEventBuffered,
    RaiseEventSuccess,
    Refusals,
    RunSuccess,
    SlotSuccess,
    StartRunSuccess,
    UpdateSubjectSuccess,
    as_object,
    completed,
    on_run,
    on_slot,
    payload_of,
    raised,
    run_now,
    slot_success,
    subject_success,
)
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
                attributes=as_object(input.subject.attributes, "subject.attributes"),
                idempotency_key=input.idempotency_key,
            )
            return {"run": started.run.view.id, "created": started.created}

        async def build(info: Info, _: Principal, a: keyed.Answer, again: bool) -> StartRunSuccess:
            return StartRunSuccess(
                run=await run_now(info, a["run"]), created=a["created"] and not again
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
                attributes=as_object(input.attributes, "attributes"),
            )
            return {
                "subject": [subject.type, subject.external_id, subject.attributes],
                "runs": list(run_ids),
            }

        return await keyed.answer(info, "updateSubject", input, work, subject_success)

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
                payload=payload_of(input.payload),
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

        return await keyed.answer(info, "raiseEvent", input, work, raised)

    @strawberry.mutation(description="Take an open slot for yourself.")
    async def claim(self, info: Info, input: ClaimArg) -> ClaimPayload:
        return await on_slot(
            info,
            "claim",
            input,
            lambda me, slot_id, request: slot_service.claim(
                info.context.services, me, slot_id, input.expected_version, request
            ),
        )

    @strawberry.mutation(description="Take the most urgent open slot you may take.")
    async def claim_next(self, info: Info, input: ClaimNextArg) -> ClaimNextPayload:
        f = input.filter.to_filter() if input.filter else InboxFilter().to_filter()

        async def work(me: Principal) -> keyed.Answer:
            context, request = info.context, await checked(info)
            slot = await slot_service.claim_next(
                context.services, me, f, request, caller_digest=context.caller_digest
            )
            return {"slot": slot.id}

        # The claim statement checks the caller itself: one round trip (service/callers.py).
        return await keyed.answer_presumed(
            info, "claimNext", input, work, slot_success, SlotSuccess
        )

    @strawberry.mutation(description="Put a claimed slot back in the pool (holder or delegate).")
    async def release(self, info: Info, input: ReleaseArg) -> ReleasePayload:
        return await on_slot(
            info,
            "release",
            input,
            lambda me, slot_id, request: slot_service.release(
                info.context.services, me, slot_id, input.reason, request
            ),
        )

    @strawberry.mutation(description="Hand a slot to a candidate (its holder or a delegate).")
    async def assign(self, info: Info, input: AssignArg) -> AssignPayload:
        return await on_slot(
            info,
            "assign",
            input,
            lambda me, slot_id, request: slot_service.assign(
                info.context.services,
                me,
                slot_id,
                input.to,
                input.expected_version,
                input.reason,
                request,
            ),
        )

    @strawberry.mutation(description="Complete a slot with its event's payload; the run moves on.")
    async def complete(self, info: Info, input: CompleteArg) -> CompletePayload:
        async def work(me: Principal) -> keyed.Answer:
            slot, run = await slot_service.complete(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                event=input.event,
                payload=payload_of(input.payload),
                expected_version=input.expected_version,
            )
            return {"slot": slot.id, "run": run.view.id}

        return await keyed.answer(info, "complete", input, work, completed)

    @strawberry.mutation(description="Make a manual move on a run (see Run.moves).")
    async def move(self, info: Info, input: MoveArg) -> MovePayload:
        data = as_object(input.input, "input") if input.input is not None else None
        return await on_run(
            info,
            "move",
            input,
            lambda me, run_id: run_service.move(
                info.context.services,
                me,
                run_id=run_id,
                name=input.move,
                data=data,
                expected_version=input.expected_version,
            ),
        )

    @strawberry.mutation(description="Cancel a live run (leads, admins, applications).")
    async def cancel_run(self, info: Info, input: CancelRunArg) -> CancelRunPayload:
        return await on_run(
            info,
            "cancelRun",
            input,
            lambda me, run_id: run_service.cancel_run(
                info.context.services,
                me,
                run_id=run_id,
                reason=input.reason,
                expected_version=input.expected_version,
            ),
        )
