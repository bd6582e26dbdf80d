"""Outside senders in GraphQL: take a leased batch of notifications, mark each sent or failed.

``takeNotifications`` leases what is deliverable now to the calling integration
(several senders never get the same notification); ``markNotificationSent`` and
``markNotificationFailed`` answer for each with the lease it got. A sender whose
lease ran out and was taken over gets ``LeaseLost`` and must not send again.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.delivery import notifications as types
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import delivery as core
from taskflow.service.delivery import delivery


@strawberry.enum(description="Whose notifications a sender takes.")
class TakeRecipients(Enum):
    OUTSIDERS = strawberry.enum_value("outsiders", description="Outsiders' only (email:<address>).")
    EVERYONE = strawberry.enum_value(
        "everyone", description="Every recipient's: principals' and outsiders'."
    )


@strawberry.input(description="Lease a batch of deliverable notifications to send.")
class TakeNotificationsInput:
    limit: int = strawberry.field(
        default=20, description=f"How many at most (1 to {core.TAKE_MAX})."
    )
    lease_seconds: int = strawberry.field(
        default=core.LEASE_DEFAULT,
        description=f"How long they stay yours ({core.LEASE_MIN} to {core.LEASE_MAX} s): "
        "mark each before then, or another sender may take it.",
    )
    recipients: TakeRecipients = strawberry.field(
        default=TakeRecipients.EVERYONE, description="Whose (default: everyone's)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The notifications now leased to the caller.")
class TakeNotificationsSuccess:
    lease: str = strawberry.field(
        description="The lease's id: pass it to markNotificationSent / markNotificationFailed."
    )
    lease_expires_at: datetime = strawberry.field(
        description="When the lease runs out: unmarked notifications are deliverable again."
    )
    notifications: list[types.Notification] = strawberry.field(
        description="What to send, in deliverAt order (empty: nothing is deliverable now)."
    )


@strawberry.input
class Leased:
    """The notification a sender leased (first among the fields of the mark inputs)."""

    notification_id: strawberry.ID = strawberry.field(description="The notification's global id.")
    lease: str = strawberry.field(description="The lease takeNotifications answered.")


@strawberry.input(description="Say a leased notification was sent.")
class MarkNotificationSentInput(Leased):
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Say sending a leased notification failed.")
class MarkNotificationFailedInput(Leased):
    error: str = strawberry.field(description="What went wrong (kept as lastError).")
    permanent: bool = strawberry.field(
        default=False,
        description="True when retrying cannot help (a rejected address): it goes DEAD. "
        f"Else FAILED, taken again after a backoff, DEAD after {core.MAX_ATTEMPTS} attempts.",
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The notification as it stands now.")
class MarkNotificationSuccess:
    notification: types.Notification = strawberry.field(description="Its new delivery state.")


LeaseLost = r.LeaseLost

TakeNotificationsPayload = Annotated[
    TakeNotificationsSuccess | relay.Common,
    strawberry.union("TakeNotificationsPayload", description="Result of takeNotifications."),
]
MarkNotificationPayload = Annotated[
    MarkNotificationSuccess | LeaseLost | relay.Common,
    strawberry.union(
        "MarkNotificationPayload",
        description="Result of markNotificationSent and markNotificationFailed.",
    ),
]


async def _taken(
    info: Info, _: Principal, found: keyed.Answer, __: bool
) -> TakeNotificationsSuccess:
    """The batch a take leased (again: as it stands now, for a take sent again with its key)."""
    ids = [int(i) for i in found["ids"]]
    rows = await delivery.taken_again(info.context.services, ids)
    order = {n: place for place, n in enumerate(ids)}
    return TakeNotificationsSuccess(
        lease=str(found["lease"]),
        lease_expires_at=datetime.fromisoformat(str(found["until"])),
        notifications=[types.Notification.of(r) for r in sorted(rows, key=lambda r: order[r.id])],
    )


async def _marked(
    info: Info, _: Principal, found: keyed.Answer, __: bool
) -> MarkNotificationSuccess:
    [row] = await delivery.taken_again(info.context.services, [int(found["notification"])])
    return MarkNotificationSuccess(notification=types.Notification.of(row))


@strawberry.type
class DeliveryMutations:
    @keyed.mutation(TakeNotificationsPayload, _taken)
    async def take_notifications(
        self, info: Info, me: Principal, input: TakeNotificationsInput
    ) -> keyed.Answer:
        """Lease deliverable notifications (deliverAt come; PENDING, FAILED whose retry time came,
        or SENDING whose lease ran out) to send them: integrations only, of the workflows
        granted. Two senders never get the same notification."""
        taken = await delivery.take(
            info.context.services,
            me,
            limit=input.limit,
            lease_seconds=input.lease_seconds,
            outsiders_only=input.recipients is TakeRecipients.OUTSIDERS,
        )
        return {
            "lease": taken.lease,
            "until": taken.until.isoformat(),
            "ids": [n.id for n in taken.notifications],
        }

    @keyed.mutation(MarkNotificationPayload, _marked)
    async def mark_notification_sent(
        self, info: Info, me: Principal, input: MarkNotificationSentInput
    ) -> keyed.Answer:
        """Mark a notification you leased (takeNotifications) as sent: SENT. LeaseLost when your
        lease ran out and another sender took it."""
        row = await delivery.mark_sent(
            info.context.services, me, types.notification_id(input.notification_id), input.lease
        )
        return {"notification": row.id}

    @keyed.mutation(MarkNotificationPayload, _marked)
    async def mark_notification_failed(
        self, info: Info, me: Principal, input: MarkNotificationFailedInput
    ) -> keyed.Answer:
        """Mark a notification you leased as failed: FAILED (taken again after a backoff) or, when
        permanent or out of attempts, DEAD; error is kept as lastError."""
        row = await delivery.mark_failed(
            info.context.services,
            me,
            types.notification_id(input.notification_id),
            input.lease,
            error=input.error,
            permanent=input.permanent,
        )
        return {"notification": row.id}
