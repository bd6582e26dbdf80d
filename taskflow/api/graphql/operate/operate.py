"""Operator verbs in GraphQL: goto, pauseClocks, resumeClocks, reassignHeld, rescheduleTimer.

Admins, and leads and managers granted the run's workflow (rule ``operate``);
each takes a mandatory reason that goes on the run's timeline with the
operator's id, and an idempotencyKey.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from taskflow.api.graphql.clocks.timers import TimerSuccess, timer_success
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.targets import OnRun, OnTimer
from taskflow.api.graphql.slots.work_answers import (
    Refusals,
    RunSuccess,
    Viewed,
    on_run,
    run_success,
)
from taskflow.core.access.principals import Principal
from taskflow.service.operate import operate


@strawberry.input(description="Move a live run to any state of its definition.")
class GotoInput(OnRun):
    state: str = strawberry.field(description="The state to move it to (any of its definition).")
    reason: str = strawberry.field(description="Why, for the run's timeline (required).")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version you saw; refused (STALE_VERSION) if it changed since.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Pause or resume a run's clocks by hand.")
class ClocksInput(OnRun):
    reason: str = strawberry.field(description="Why, for the run's timeline (required).")
    expected_version: int | None = strawberry.field(
        default=None,
        description="The run's version you saw; refused (STALE_VERSION) if it changed since.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Hand over or release everything a principal holds.")
class ReassignHeldInput:
    principal_id: str = strawberry.field(description="Whose held slots (a principal id).")
    to: str | None = strawberry.field(
        default=None,
        description="The principal id to assign them to; null releases them to the pool.",
    )
    reason: str = strawberry.field(description="Why, for each run's timeline (required).")
    force: bool = strawberry.field(
        default=False,
        description="True: hand the work over even when `to` is on leave (OnLeave otherwise).",
    )
    dry_run: bool = strawberry.field(
        default=False, description="Only count what would move; change nothing."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Make an armed or dead timer due at another instant.")
class RescheduleTimerInput(OnTimer):
    due_at: datetime = strawberry.field(description="When it should fall due (with an offset).")
    reason: str = strawberry.field(description="Why, for the run's timeline (required).")
    idempotency_key: str | None = relay.idempotency_key_field()


ClocksUnchanged = r.ClocksUnchanged
TimerSpent = r.TimerSpent


@strawberry.type(description="What reassignHeld moved, or on a dry run would move.")
class ReassignHeldSuccess:
    held: int = strawberry.field(
        description="Slots the principal holds in the workflows you may operate."
    )
    moved: int = strawberry.field(description="Slots moved (or, on a dry run, that would move).")
    skipped: int = strawberry.field(
        description="Slots left as they are: the target is not a candidate for them."
    )
    dry_run: bool = strawberry.field(description="True when nothing was changed.")
    slot_ids: list[strawberry.ID] = strawberry.field(
        description="Global ids of the slots moved (or that would move)."
    )


GotoPayload = Annotated[
    RunSuccess | Refusals, strawberry.union("GotoPayload", description="Result of goto.")
]
ClocksPayload = Annotated[
    RunSuccess | ClocksUnchanged | Refusals,
    strawberry.union("ClocksPayload", description="Result of pauseClocks and resumeClocks."),
]
ReassignHeldPayload = Annotated[
    ReassignHeldSuccess | r.OnLeave | relay.Common,
    strawberry.union("ReassignHeldPayload", description="Result of reassignHeld."),
]
RescheduleTimerPayload = Annotated[
    TimerSuccess | TimerSpent | relay.Common,
    strawberry.union("RescheduleTimerPayload", description="Result of rescheduleTimer."),
]


async def _reassigned(
    info: Info, _: Principal, answer: keyed.Answer, __: bool
) -> ReassignHeldSuccess:
    return relay.copied(
        ReassignHeldSuccess,
        answer,
        moved=len(answer["moved"]),
        slot_ids=[relay.node_id("Slot", s) for s in answer["moved"]],
    )


@strawberry.type
class OperateMutations:
    @keyed.mutation(GotoPayload, run_success, argument=relay.WHAT)
    @on_run
    async def goto(self, info: Info, me: Principal, input: GotoInput, run_id: str) -> Viewed:
        """Move a live run to any state of its definition, as a move does: the current state's live
        slots are cancelled, the target's enter hook runs and its slots open (admins, and leads
        and managers granted the workflow)."""
        return await operate.goto(
            info.context.services,
            me,
            run_id=run_id,
            state=input.state,
            reason=input.reason,
            expected_version=input.expected_version,
        )

    @keyed.mutation(ClocksPayload, run_success, argument=relay.WHAT)
    @on_run
    async def pause_clocks(
        self, info: Info, me: Principal, input: ClocksInput, run_id: str
    ) -> Viewed:
        """Pause every running clock of the run's current slots by hand (admins, and leads and
        managers granted the workflow)."""
        return await operate.pause_clocks(
            info.context.services,
            me,
            run_id=run_id,
            reason=input.reason,
            expected_version=input.expected_version,
        )

    @keyed.mutation(ClocksPayload, run_success, argument=relay.WHAT)
    @on_run
    async def resume_clocks(
        self, info: Info, me: Principal, input: ClocksInput, run_id: str
    ) -> Viewed:
        """Resume the paused clocks of the run's current slots (admins, and leads and managers
        granted the workflow)."""
        return await operate.resume_clocks(
            info.context.services,
            me,
            run_id=run_id,
            reason=input.reason,
            expected_version=input.expected_version,
        )

    @keyed.mutation(ReassignHeldPayload, _reassigned, argument=relay.WHAT)
    async def reassign_held(
        self, info: Info, me: Principal, input: ReassignHeldInput
    ) -> keyed.Answer:
        """Assign everything a principal holds to another (each slot where they are a candidate), or
        release it all to the pool (to: null); dryRun counts first. Only slots of workflows you
        may operate are touched."""
        done = await operate.reassign_held(
            info.context.services,
            me,
            principal_id=input.principal_id,
            to=input.to,
            reason=input.reason,
            dry_run=input.dry_run,
            force=input.force,
        )
        return {
            "held": done.held,
            "moved": done.moved,
            "skipped": len(done.skipped),
            "dry_run": done.dry_run,
        }

    @keyed.mutation(RescheduleTimerPayload, timer_success, argument=relay.WHAT)
    async def reschedule_timer(
        self, info: Info, me: Principal, input: RescheduleTimerInput
    ) -> keyed.Answer:
        """Make an armed or DEAD timer due at another instant, armed with its attempts reset
        (admins, and leads and managers granted the workflow); a timer.rescheduled line goes on
        the run's timeline."""
        row = await operate.reschedule_timer(
            info.context.services,
            me,
            timer_id=input.local_timer_id(),
            due_at=input.due_at,
            reason=input.reason,
        )
        return {"timer": row.id}
