"""Needs attention in GraphQL: the list (``needsAttention``) and the operator verbs
(``goto``, ``pauseClocks``, ``resumeClocks``, ``reassignHeld``, ``rescheduleTimer``).

Admins, and leads and managers where their grants reach; every verb takes a
reason for the run's timeline and an idempotencyKey.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from taskflow import errors
from taskflow.api.graphql import relay
from taskflow.api.graphql.context import Info, caller
from taskflow.api.graphql.types import RUN
from taskflow.core import attention as core
from taskflow.service import attention


@strawberry.enum(description="Why something needs a person.")
class AttentionReason(Enum):
    ROUTE_UNMATCHED = strawberry.enum_value(
        core.Reason.ROUTE_UNMATCHED.value,
        description="The state's completion rule held but no route matched: the run waits. "
        "Clear it with goto (or by updating the subject).",
    )
    TIMER_DEAD = strawberry.enum_value(
        core.Reason.TIMER_DEAD.value,
        description="A timer failed every attempt and is parked DEAD. Clear it with retryTimer, "
        "rescheduleTimer or discardTimer.",
    )
    TIMER_FAILING = strawberry.enum_value(
        core.Reason.TIMER_FAILING.value,
        description="A timer's firing failed and is retried with backoff. Mend the cause, or "
        "rescheduleTimer.",
    )
    HELD_BY_INACTIVE = strawberry.enum_value(
        core.Reason.HELD_BY_INACTIVE.value,
        description="A slot is held by a deactivated principal. Clear it with reassignHeld.",
    )
    BREACHED_UNHELD = strawberry.enum_value(
        core.Reason.BREACHED_UNHELD.value,
        description="A slot breached its SLA and nobody holds it. Assign it, or someone claims it.",
    )
    IDLE = strawberry.enum_value(
        core.Reason.IDLE.value,
        description="An active run has not changed for longer than TASKFLOW_IDLE_AFTER. Move it "
        "on (goto) or cancel it.",
    )
    EVENT_EXPIRING = strawberry.enum_value(
        core.Reason.EVENT_EXPIRING.value,
        description="An event kept for a slot not yet open expires within "
        "TASKFLOW_EVENT_EXPIRING_WITHIN. goto the state whose slot awaits it, or let it expire.",
    )
    STEP_PARKED = strawberry.enum_value(
        core.Reason.STEP_PARKED.value,
        description="An automatic step failed its last attempt and no on_error route took it: "
        "the run waits in its state. Mend the cause, then retryStep (or goto).",
    )


@strawberry.type(description="One thing that needs a person, and what it concerns.")
class AttentionItem:
    reason: AttentionReason = strawberry.field(description="Why it needs attention.")
    since: datetime = strawberry.field(
        description="Since when: the unmatched route, the timer's planned instant or last "
        "failure, the hold, the breach, the last change, the event's arrival."
    )
    until: datetime | None = strawberry.field(
        description="When it ends by itself, if it does (a kept event's expiry; a failing "
        "timer's next attempt)."
    )
    run_id: strawberry.ID = strawberry.field(description="Global id of the run it concerns.")
    workflow: str = strawberry.field(description="The run's workflow.")
    state: str = strawberry.field(description="The run's state.")
    slot_id: strawberry.ID | None = strawberry.field(
        description="Global id of the slot it concerns, if one."
    )
    timer_id: strawberry.ID | None = strawberry.field(
        description="Global id of the timer it concerns, if one."
    )
    principal_id: str | None = strawberry.field(
        description="The principal it concerns (a deactivated holder, an event's raiser)."
    )
    detail: str = strawberry.field(description="What exactly, in words.")
    remedy: str = strawberry.field(description="What clears it.")

    @classmethod
    def of(cls, item: core.Item) -> AttentionItem:
        return cls(
            reason=AttentionReason[item.reason.name],
            since=item.since,
            until=item.until,
            run_id=strawberry.ID(relay.to_global_id(RUN, item.run_id)),
            workflow=item.workflow,
            state=item.state,
            slot_id=strawberry.ID(relay.to_global_id("Slot", item.slot_id))
            if item.slot_id
            else None,
            timer_id=strawberry.ID(relay.to_global_id("Timer", str(item.timer_id)))
            if item.timer_id is not None
            else None,
            principal_id=item.principal,
            detail=item.detail,
            remedy=item.remedy,
        )


@strawberry.input(description="Narrows the needs-attention list.")
class AttentionFilter:
    reasons: list[AttentionReason] | None = strawberry.field(
        default=None, description="Only these reasons; default: all."
    )
    workflow: str | None = strawberry.field(
        default=None, description="Only runs of this workflow; default: all you may see."
    )


def _after(cursor: str | None) -> tuple[datetime, str, str] | None:
    if not cursor:
        return None
    since, reason, ref = relay.decode_cursor(cursor, 3)
    try:
        at = datetime.fromisoformat(since)
        core.Reason(reason)
    except ValueError:
        raise errors.ValidationError("after is not a cursor of this list.", field="after") from None
    if at.tzinfo is None or len(ref) > 64:
        raise errors.ValidationError("after is not a cursor of this list.", field="after")
    return at, reason, ref


@strawberry.type(description="Reading what needs attention.")
class AttentionQueries:
    @strawberry.field(
        description="What waits for a person, oldest first (admins, and leads and managers "
        "over the workflows granted); each item with its reason, since when and what clears it."
    )
    async def needs_attention(
        self,
        info: Info,
        first: Annotated[
            int, strawberry.argument(description=f"Page size, at most {relay.MAX_FIRST}.")
        ] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
        filter: Annotated[
            AttentionFilter | None,
            strawberry.argument(description="Which items (default: all you may see)."),
        ] = None,
    ) -> relay.Connection[AttentionItem]:
        me = await caller(info)
        limit = relay.check_first(first)
        f = filter or AttentionFilter()
        reasons = [core.Reason[x.name] for x in f.reasons] if f.reasons else None
        items, total = await attention.listing(
            info.context.services,
            me,
            reasons=reasons,
            workflow=f.workflow,
            after=_after(after),
            limit=limit + 1,
        )
        edges = [
            relay.Edge(
                cursor=relay.encode_cursor(i.since.isoformat(), i.reason.value, i.ref),
                node=AttentionItem.of(i),
            )
            for i in items[:limit]
        ]
        return relay.Connection(
            edges=edges,
            page_info=relay.PageInfo(
                has_next_page=len(items) > limit, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=total,
        )
