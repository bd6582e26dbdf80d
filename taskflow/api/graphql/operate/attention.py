"""Needs attention in GraphQL: the list (``needsAttention``) and the operator verbs
(``goto``, ``pauseClocks``, ``resumeClocks``, ``reassignHeld``, ``rescheduleTimer``).

Admins, and leads and managers where their grants reach; every verb takes a
reason for the run's timeline and an idempotencyKey.
"""

from __future__ import annotations

from datetime import datetime

import strawberry

from taskflow import errors
from taskflow.api.graphql.common import listing, relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.common.enums import Reason
from taskflow.api.graphql.runs.types import RUN
from taskflow.core.access.principals import Principal
from taskflow.core.operate import attention as core
from taskflow.service.operate import attention


@strawberry.type(description="One thing that needs a person, and what it concerns.")
class AttentionItem:
    reason: Reason = strawberry.field(description="Why it needs attention.")
    since: datetime = strawberry.field(
        description="Since when: the unmatched route, the timer's planned instant or last "
        "failure, the hold, the breach, the last change, the event's arrival."
    )
    until: datetime | None = strawberry.field(
        description="When it ends by itself, if it does (a kept event's expiry; a failing "
        "timer's next attempt)."
    )
    run_id: strawberry.ID | None = strawberry.field(
        description="Global id of the run it concerns (null: none, as for REPLICA_LAGGING)."
    )
    workflow: str | None = strawberry.field(description="The run's workflow (null: no run).")
    state: str | None = strawberry.field(description="The run's state (null: no run).")
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
        return relay.copied(
            cls,
            item,
            run_id=relay.node_id(RUN, item.run_id),
            slot_id=relay.node_id("Slot", item.slot_id),
            timer_id=relay.node_id("Timer", item.timer_id),
            principal_id=item.principal,
        )


@strawberry.input(description="Narrows the needs-attention list.")
class AttentionFilter:
    reasons: list[Reason] | None = strawberry.field(
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
        Reason(reason)
    except ValueError:
        raise errors.ValidationError("after is not a cursor of this list.", field="after") from None
    if at.tzinfo is None or len(ref) > 64:
        raise errors.ValidationError("after is not a cursor of this list.", field="after")
    return at, reason, ref


@strawberry.type(description="Reading what needs attention.")
class AttentionQueries:
    @listing.connection(AttentionFilter, "Which items (default: all you may see).")
    async def needs_attention(
        self, info: Info, me: Principal, page: listing.Page, filter: AttentionFilter
    ) -> relay.Connection[AttentionItem]:
        """What waits for a person, oldest first (admins, and leads and managers over the
        workflows granted); each item with its reason, since when and what clears it."""
        items, total = await attention.listing(
            info.context.services,
            me,
            reasons=list(filter.reasons) if filter.reasons else None,
            workflow=filter.workflow,
            after=_after(page.after),
            limit=page.first + 1,
        )
        return relay.connection(
            items,
            AttentionItem.of,
            lambda i: relay.encode_cursor(i.since.isoformat(), i.reason.value, i.ref),
            total=total,
            limit=page.first,
        )
