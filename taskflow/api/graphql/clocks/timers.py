"""Timers in GraphQL: their state, attempts and last error; retry or discard a dead one.

Leads, managers and admins read timers (``timers``, ``Run.timers``,
``node(id:)``) and mend dead ones (``retryTimer``, ``discardTimer``); others
see none.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import keyed, listing, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.enums import TimerState
from taskflow.api.graphql.common.targets import OnTimer
from taskflow.core.access.principals import Principal
from taskflow.core.clocks.timer_states import TimerStatus
from taskflow.service.clocks import timer_admin

TYPE_NAME = "Timer"


@strawberry.type(description="A durable deadline of a run: a reminder, a breach or a timeout.")
class Timer(relay.Node):
    key: str = strawberry.field(description="Its stable name, e.g. <slot>:reminder:0.")
    kind: str = strawberry.field(
        description="breach, at_risk, reminder, timeout, or an automatic step's kind."
    )
    part: str = strawberry.field(
        description="The milestone (breach), reminder index or timeout index it belongs to."
    )
    state: TimerState = strawberry.field(description="Where it stands.")
    due_at: datetime = strawberry.field(
        description="When it falls due; after a failed firing, its next attempt."
    )
    planned_at: datetime = strawberry.field(
        description="When its definition planned it to fall due (dueAt unless a failure "
        "pushed it back)."
    )
    fired: int = strawberry.field(description="How many times it has fired.")
    attempts: int = strawberry.field(
        description="Failed firings since it last fired or was armed; at maxAttempts it is DEAD."
    )
    max_attempts: int = strawberry.field(
        description="Failed firings after which it is parked DEAD (TASKFLOW_TIMER_MAX_ATTEMPTS)."
    )
    last_error: str | None = strawberry.field(
        description="Its last failure, as Class: message (short); null if it never failed."
    )
    failed_at: datetime | None = strawberry.field(description="When it last failed.")
    run_id: strawberry.ID = strawberry.field(description="Global id of its run.")
    slot_id: strawberry.ID | None = strawberry.field(
        description="Global id of its slot; null for a state's timeout."
    )

    @classmethod
    def of(cls, row: timer_admin.TimerRow, max_attempts: int) -> Timer:
        return relay.copied(
            cls,
            row,
            part=row.ref,
            state=TimerStatus(row.status),
            planned_at=row.planned,
            max_attempts=max_attempts,
            run_id=relay.node_id("Run", row.run_id),
            slot_id=relay.node_id("Slot", row.slot_id),
        )


def _of(info: Info, row: timer_admin.TimerRow) -> Timer:
    return Timer.of(row, info.context.services.settings.timer_max_attempts)


@strawberry.input(description="Narrows the timers listed.")
class TimerFilter:
    state: TimerState | None = strawberry.field(
        default=None, description="Only timers in this state (e.g. DEAD); default: any."
    )
    run_id: strawberry.ID | None = strawberry.field(
        default=None, description="Only this run's timers (its global id)."
    )


async def timers_of_run(info: Info, run_id: str) -> list[Timer] | None:
    """``Run.timers``: every timer of the run, oldest first (leads and admins)."""
    me = await caller(info)
    found = await timer_admin.of_run(info.context.services, me, run_id)
    return [_of(info, t) for t in found] if found is not None else None


async def resolve_node(info: Info, local_id: str) -> Timer | None:
    """``node(id:)`` for a timer: leads and admins see it."""
    me = await caller(info)
    if not local_id.isdigit() or len(local_id) > 18:
        return None
    row = await timer_admin.get(info.context.services, me, int(local_id))
    return _of(info, row) if row is not None else None


@strawberry.type(description="Reading timers.")
class TimerQueries:
    @listing.connection(TimerFilter, "Which timers (default: all).")
    async def timers(
        self, info: Info, me: Principal, page: listing.Page, filter: TimerFilter
    ) -> relay.Connection[Timer]:
        """Timers oldest first, e.g. every DEAD one (leads, managers and admins)."""
        run_id = relay.local_id(filter.run_id, "Run", "filter.runId") if filter.run_id else None
        rows, total = await timer_admin.listing(
            info.context.services,
            me,
            statuses=[filter.state] if filter.state is not None else None,
            run_id=_uuid(run_id),
            after_id=relay.after_id(page.after) or 0,
            limit=page.first + 1,
        )
        return relay.connection(
            rows, lambda row: _of(info, row), relay.id_cursor, total=total, limit=page.first
        )


def _uuid(run_id: str | None) -> str | None:
    if run_id is None:
        return None
    try:
        return str(uuid.UUID(run_id))
    except ValueError:
        raise errors.NotFound(f"No run has the id {run_id!r}.", field="filter.runId") from None


# -- mending dead timers -------------------------------------------------------------------------


TimerNotDead = r.TimerNotDead


@strawberry.type(description="The timer was retried or discarded.")
class TimerSuccess:
    timer: Timer = strawberry.field(description="The timer as it stands now.")


@strawberry.input(description="Arm a dead timer again, due now, with its attempts reset.")
class RetryTimerInput(OnTimer):
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Give up on a dead timer.")
class DiscardTimerInput(OnTimer):
    reason: str = strawberry.field(description="Why, for the run's timeline (required).")
    idempotency_key: str | None = relay.idempotency_key_field()


TimerPayload = Annotated[
    TimerSuccess | TimerNotDead | relay.Common,
    strawberry.union("TimerPayload", description="Result of retryTimer and discardTimer."),
]


async def timer_success(info: Info, me: Principal, answer: keyed.Answer, _: bool) -> TimerSuccess:
    """The timer of a timer mutation's answer as it stands now (NOT_FOUND when gone)."""
    row = await timer_admin.get(info.context.services, me, int(answer["timer"]))
    if row is None:
        raise errors.NotFound("The timer is gone.")
    return TimerSuccess(timer=_of(info, row))


@strawberry.type
class TimerMutations:
    @keyed.mutation(TimerPayload, timer_success)
    async def retry_timer(self, info: Info, me: Principal, input: RetryTimerInput) -> keyed.Answer:
        """Arm a DEAD timer again, due now, with its attempts reset (leads, managers, admins); a
        timer.retried line goes on the run's timeline."""
        row = await timer_admin.retry(info.context.services, me, input.local_timer_id())
        return {"timer": row.id}

    @keyed.mutation(TimerPayload, timer_success)
    async def discard_timer(
        self, info: Info, me: Principal, input: DiscardTimerInput
    ) -> keyed.Answer:
        """Give up on a DEAD timer (leads, managers, admins): it never fires; the reason goes on the
        run's timeline as timer.discarded."""
        timer_id = input.local_timer_id()
        row = await timer_admin.discard(info.context.services, me, timer_id, input.reason)
        return {"timer": row.id}
