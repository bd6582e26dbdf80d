"""Mutations of the work API. Each takes one input and returns success or a typed refusal."""

from __future__ import annotations

from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info, checked
from taskflow.api.graphql.runs.types import RUN, SLOT
from taskflow.api.graphql.slots.work import InboxFilter
from taskflow.api.graphql.slots.work_answers import (
    CompleteSuccess,
    RaiseEventBuffered,
    RaiseEventSuccess,
    Refusals,
    RunSuccess,
    SlotSuccess,
    StartRunSuccess,
    UpdateSubjectSuccess,
    UpsertSubjectSuccess,
    Viewed,
    as_object,
    completed,
    on_run,
    on_slot,
    payload_of,
    raised,
    run_now,
    run_success,
    slot_success,
    subject_success,
    upserted,
)
from taskflow.api.graphql.slots.work_inputs import (
    AssignInput,
    CancelRunInput,
    ClaimInput,
    ClaimNextInput,
    CompleteInput,
    MoveInput,
    RaiseEventInput,
    ReleaseInput,
    StartRunInput,
    UpdateSubjectInput,
    UpsertSubjectInput,
    delayed,
)
from taskflow.core.access.principals import Principal
from taskflow.core.runs import awaiting
from taskflow.core.runs.awaiting import WaitFor
from taskflow.core.runs.model import SlotView
from taskflow.service.access import access
from taskflow.service.files import files as file_service
from taskflow.service.runs import awaited, events, owned
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service

StartRunPayload = Annotated[
    StartRunSuccess | r.RunExists | r.SubjectGone | relay.Common,
    strawberry.union("StartRunPayload", description="Result of startRun."),
]
#: What sending a subject may be refused with (updateSubject, upsertSubject).
SubjectRefusals = (
    r.SubjectGone
    | relay.InvalidInput
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | r.MoveNotAllowed
    | r.OwnedField
    | relay.WorkspaceLimitReached
    | relay.Keyed
)
UpdateSubjectPayload = Annotated[
    UpdateSubjectSuccess | SubjectRefusals,
    strawberry.union("UpdateSubjectPayload", description="Result of updateSubject."),
]
UpsertSubjectPayload = Annotated[
    UpsertSubjectSuccess | SubjectRefusals,
    strawberry.union("UpsertSubjectPayload", description="Result of upsertSubject."),
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
    SlotSuccess | r.NothingToClaim | relay.InvalidInput | relay.Keyed,
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


async def _started(info: Info, _: Principal, a: keyed.Answer, again: bool) -> StartRunSuccess:
    reached = None
    if a.get("wait"):  # after the start's transaction and its idempotency key: holding nothing
        kind, seconds, state, visit = a["wait"]
        services = info.context.services
        reached = await awaited.wait(services, a["run"], (state, visit), WaitFor(kind), seconds)
    return StartRunSuccess(
        run=await run_now(info, a["run"]), created=a["created"] and not again, reached=reached
    )


@strawberry.type
class WorkMutations:
    @keyed.mutation(StartRunPayload, _started)
    async def start_run(self, info: Info, me: Principal, input: StartRunInput) -> keyed.Answer:
        """Start a run of a workflow for a subject (applications); with waitFor, answer once
        the run is there (bounded by timeoutSeconds)."""
        seconds = awaiting.timeout_of(input.wait_for, input.timeout_seconds)
        delay = delayed(input.start_at, input.wait_for)
        started = await run_service.start_run(
            info.context.services,
            me,
            workflow=input.workflow,
            version=input.version,
            subject_type=input.subject.type,
            external_id=input.subject.external_id,
            attributes=as_object(input.subject.attributes, "subject.attributes"),
            idempotency_key=input.idempotency_key,
            delay=delay,
        )
        view, wait = started.run.view, None
        if input.wait_for is not None:  # waited for when the answer is built (_started)
            wait = [input.wait_for.value, seconds, view.state, view.visit]
        return {"run": started.run.view.id, "created": started.created, "wait": wait}

    @keyed.mutation(UpdateSubjectPayload, subject_success)
    async def update_subject(
        self, info: Info, me: Principal, input: UpdateSubjectInput
    ) -> keyed.Answer:
        """Replace a subject's attributes; its runs re-check their rules."""
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

    @keyed.mutation(UpsertSubjectPayload, upserted)
    async def upsert_subject(
        self, info: Info, me: Principal, input: UpsertSubjectInput
    ) -> keyed.Answer:
        """Create a subject or replace its attributes (applications); a new subject of a type
        a workflow owns starts that workflow's run (one per subject, however often sent)."""
        done = await owned.upsert_subject(
            info.context.services,
            me,
            subject_type=input.type,
            external_id=input.external_id,
            attributes=as_object(input.attributes, "attributes"),
        )
        subject = done.subject
        return {
            "subject": [subject.type, subject.external_id, subject.attributes],
            "runs": list(done.runs),
            "started": done.started.view.id if done.started else None,
            "owned": done.owned.view.id if done.owned else None,
        }

    @keyed.mutation(RaiseEventPayload, raised)
    async def raise_event(self, info: Info, me: Principal, input: RaiseEventInput) -> keyed.Answer:
        """Raise an event: it completes the one slot waiting for it (staff obey the holder and
        candidate rules of complete; the event's declared raisers apply to everyone). When no
        slot waits and the workflow buffers the event, the run keeps it."""
        t = input.target
        target = events.EventTarget(
            run_id=relay.local_id(t.run_id, RUN, "target.runId") if t.run_id else None,
            subject_type=t.subject.type if t.subject else None,
            subject_external_id=t.subject.external_id if t.subject else None,
            correlation_key=t.correlation_key,
            slot_name=t.slot_name,
            item=t.item,
            expected_version=input.expected_version,
        )
        payload = payload_of(input.payload)
        # The rule of complete: a file reference must be the raiser's own stored upload.
        uploader = file_service.staff_uploader(me)
        await file_service.check_stored(info.context.services, payload, uploader)
        raised = await events.raise_event(
            info.context.services, me, event=input.event, payload=payload, target=target
        )
        if raised.buffered is not None:
            kept = raised.buffered
            return {
                "run": raised.run.view.id,
                "kept": [kept.event, kept.arrived_at.isoformat(), kept.expires_at.isoformat()],
            }
        assert raised.slot is not None
        return {"run": raised.run.view.id, "slot": raised.slot.id}

    @keyed.mutation(ClaimPayload, slot_success)
    @on_slot
    async def claim(
        self,
        info: Info,
        me: Principal,
        input: ClaimInput,
        slot_id: str,
        request: access.RequestAccess,
    ) -> SlotView:
        """Take an open slot for yourself."""
        return await slot_service.claim(
            info.context.services, me, slot_id, input.expected_version, request
        )

    # The claim statement checks the caller itself: one round trip (service/access/callers.py).
    @keyed.mutation(ClaimNextPayload, slot_success, presumed=SlotSuccess)
    async def claim_next(self, info: Info, me: Principal, input: ClaimNextInput) -> keyed.Answer:
        """Take the most urgent open slot you may take."""
        f = input.filter.to_filter() if input.filter else InboxFilter().to_filter()
        context, request = info.context, await checked(info)
        # A claim made by claim_fast, whose outcome (a refusal, a changed caller) is
        # answered here: taken once, never made twice.
        made, context.claimed = context.claimed, None
        slot = await (
            made()
            if made is not None
            else slot_service.claim_next(
                context.services, me, f, request, caller_digest=context.caller_digest
            )
        )
        return {"slot": slot.id}

    @keyed.mutation(ReleasePayload, slot_success)
    @on_slot
    async def release(
        self,
        info: Info,
        me: Principal,
        input: ReleaseInput,
        slot_id: str,
        request: access.RequestAccess,
    ) -> SlotView:
        """Put a claimed slot back in the pool (holder or delegate)."""
        return await slot_service.release(
            info.context.services, me, slot_id, input.reason, request, input.expected_version
        )

    @keyed.mutation(AssignPayload, slot_success)
    @on_slot
    async def assign(
        self,
        info: Info,
        me: Principal,
        input: AssignInput,
        slot_id: str,
        request: access.RequestAccess,
    ) -> SlotView:
        """Hand a slot to a candidate (its holder or a delegate)."""
        return await slot_service.assign(
            info.context.services,
            me,
            slot_id,
            input.to,
            input.expected_version,
            input.reason,
            request,
            force=input.force,
        )

    @keyed.mutation(CompletePayload, completed)
    async def complete(self, info: Info, me: Principal, input: CompleteInput) -> keyed.Answer:
        """Complete a slot with its event's payload; the run moves on."""
        payload = payload_of(input.payload)
        uploader = file_service.staff_uploader(me)
        await file_service.check_stored(info.context.services, payload, uploader)
        slot, run = await slot_service.complete(
            info.context.services,
            me,
            relay.local_id(input.slot_id, SLOT, "slotId"),
            event=input.event,
            payload=payload,
            expected_version=input.expected_version,
        )
        return {"slot": slot.id, "run": run.view.id}

    @keyed.mutation(MovePayload, run_success)
    @on_run
    async def move(self, info: Info, me: Principal, input: MoveInput, run_id: str) -> Viewed:
        """Make a manual move on a run (see Run.moves)."""
        return await run_service.move(
            info.context.services,
            me,
            run_id=run_id,
            name=input.move,
            data=as_object(input.input, "input") if input.input is not None else None,
            expected_version=input.expected_version,
        )

    @keyed.mutation(CancelRunPayload, run_success)
    @on_run
    async def cancel_run(
        self, info: Info, me: Principal, input: CancelRunInput, run_id: str
    ) -> Viewed:
        """Cancel a live run (leads, admins, applications)."""
        return await run_service.cancel_run(
            info.context.services,
            me,
            run_id=run_id,
            reason=input.reason,
            expected_version=input.expected_version,
        )
