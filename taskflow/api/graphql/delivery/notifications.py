"""Notifications in GraphQL: the outbox (``notifications``) and the links reminders request.

Principals read their own notifications. Integrations (the mailer, the help
desk) send what the outbox holds, so they may read outsiders' or everyone's,
and mint the magic link an outsider's reminder requests
(``mintNotificationLink``): the outbox never holds a URL.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry

from taskflow.api.graphql.common import keyed, listing, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.enums import DeliveryState
from taskflow.api.graphql.links import links as link_types
from taskflow.core.access.principals import Principal
from taskflow.core.delivery import recipients
from taskflow.service.delivery import notices
from taskflow.service.links import links, notification_links

TYPE_NAME = "Notification"


@strawberry.enum(description="Who a notification is for.")
class NotificationRecipientKind(Enum):
    PRINCIPAL = strawberry.enum_value(
        "principal", description="A principal (an account): recipient is their login."
    )
    OUTSIDER = strawberry.enum_value(
        "outsider",
        description="Someone without an account (a vendor, a customer), reached by e-mail: "
        "recipient is email:<address>.",
    )


@strawberry.type(description="A message for one recipient: a reminder, an escalation, a timeout.")
class Notification(relay.Node):
    kind: str = strawberry.field(description="reminder or timeout.")
    message: str = strawberry.field(description="What it says.")
    recipient: str = strawberry.field(
        description="Whom it is for: a principal's login, or email:<address> for an outsider."
    )
    recipient_kind: NotificationRecipientKind = strawberry.field(
        description="A principal, or an outsider without an account."
    )
    recipient_email: str | None = strawberry.field(
        description="The address to write to, as it was when the notification was written; "
        "null for a principal without one."
    )
    recipient_name: str | None = strawberry.field(
        description="How to address them: a principal's display name, an outsider's name when "
        "the definition gives one (who.email(..., name=...)); else null."
    )
    link_requested: bool = strawberry.field(
        description="The sender should mint the outsider a magic link for the slot "
        "(mintNotificationLink) and put its URL in the message it sends."
    )
    link_id: strawberry.ID | None = strawberry.field(
        description="Global id of the last link minted for it (mintNotificationLink), if any."
    )
    run_id: strawberry.ID = strawberry.field(description="Global id of the run it is about.")
    slot_id: strawberry.ID | None = strawberry.field(description="Global id of the slot, if any.")
    created_at: datetime = strawberry.field(description="When it was written.")
    deliver_at: datetime = strawberry.field(
        description="When it should reach the person: later than createdAt when it fell in "
        "their quiet hours (outside their calendar; an outsider's, outside the workflow's)."
    )
    details: strawberry.scalars.JSON = strawberry.field(description="Who it was for, and why.")
    delivery_state: DeliveryState = strawberry.field(
        description="Where its delivery stands: PENDING, SENDING, SENT, FAILED or DEAD."
    )
    attempts: int = strawberry.field(
        description="How many times a sender took it (the worker's e-mail or takeNotifications)."
    )
    last_error: str | None = strawberry.field(
        description="Why the last attempt failed (the SMTP reply, or the sender's error); null "
        "if none failed."
    )
    lease_expires_at: datetime | None = strawberry.field(
        description="While SENDING: when its sender's lease runs out."
    )
    next_attempt_at: datetime | None = strawberry.field(
        description="While FAILED: when it is deliverable again."
    )
    sent_at: datetime | None = strawberry.field(description="When it was sent (SENT only).")

    @classmethod
    def of(cls, row: Any) -> Notification:
        outsider = recipients.is_outsider(row.recipient)
        return relay.copied(
            cls,
            row,
            recipient_kind=NotificationRecipientKind.OUTSIDER
            if outsider
            else NotificationRecipientKind.PRINCIPAL,
            link_id=relay.node_id(link_types.TYPE_NAME, row.link_id),
            run_id=relay.node_id("Run", row.run_id),
            slot_id=relay.node_id("Slot", row.slot_id),
            delivery_state=DeliveryState(row.delivery_state),
            lease_expires_at=row.lease_until if row.delivery_state == "sending" else None,
            next_attempt_at=row.retry_at if row.delivery_state == "failed" else None,
        )


@strawberry.enum(description="Whose notifications to list.")
class NotificationRecipients(Enum):
    MINE = strawberry.enum_value(notices.MINE, description="The caller's own (the default).")
    OUTSIDERS = strawberry.enum_value(
        notices.OUTSIDERS,
        description="Outsiders' (email:<address>), for integrations that send them.",
    )
    EVERYONE = strawberry.enum_value(
        notices.EVERYONE, description="Every recipient's: the whole outbox, for integrations."
    )


_SCOPES = {
    NotificationRecipients.MINE: notices.MINE,
    NotificationRecipients.OUTSIDERS: notices.OUTSIDERS,
    NotificationRecipients.EVERYONE: notices.EVERYONE,
}


@strawberry.input(description="Narrows the notifications listed.")
class NotificationFilter:
    recipients: NotificationRecipients = strawberry.field(
        default=NotificationRecipients.MINE,
        description="Whose: MINE (default); OUTSIDERS or EVERYONE for integrations only "
        "(others get FORBIDDEN).",
    )
    deliverable_now: bool = strawberry.field(
        default=False,
        description="Only those a sender may take now: deliverAt come, and PENDING, FAILED "
        "past nextAttemptAt, or SENDING past leaseExpiresAt (not SENT, not DEAD).",
    )


@strawberry.type(description="Reading notifications.")
class NotificationQueries:
    @listing.connection(NotificationFilter, "Whose notifications (default: your own).")
    async def notifications(
        self, info: Info, me: Principal, page: listing.Page, filter: NotificationFilter
    ) -> relay.Connection[Notification]:
        """Notifications oldest first (by id, so a sender can resume from its last cursor):
        your own, or for integrations, outsiders' or everyone's."""
        rows, total = await notices.listing(
            info.context.services,
            me,
            _SCOPES[filter.recipients],
            after_id=relay.after_id(page.after) or 0,
            limit=page.first + 1,
            deliverable_now=filter.deliverable_now,
        )
        return relay.connection(
            rows, Notification.of, relay.id_cursor, total=total, limit=page.first
        )


async def resolve_node(info: Info, local_id: str) -> Notification | None:
    """``node(id:)`` for a notification: its recipient, or an integration, sees it."""
    me = await caller(info)
    if not local_id.isdigit():
        return None
    row = await notices.get(info.context.services, me, int(local_id))
    return Notification.of(row) if row is not None else None


# -- minting the link a reminder requests ---------------------------------------------------------


LinkNotRequested = r.LinkNotRequested


@strawberry.input(description="Mint the magic link an outsider's notification requests.")
class MintNotificationLinkInput:
    notification_id: strawberry.ID = strawberry.field(
        description="The notification's global id (one with linkRequested true)."
    )
    expires_in: int | None = strawberry.field(
        default=None, description="Seconds until it stops working (default 7 days, at most 30)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(
    description="A new link for the notification's slot and recipient. The URL and token are "
    "shown once, never again; the link minted before for it, if unused, is revoked."
)
class MintNotificationLinkSuccess(link_types.MintedLink):
    pass


MintNotificationLinkPayload = Annotated[
    MintNotificationLinkSuccess
    | LinkNotRequested
    | link_types.LinksNotAllowed
    | r.SlotNotOpen
    | relay.Common,
    strawberry.union("MintNotificationLinkPayload", description="Result of mintNotificationLink."),
]
MintNotificationArg = relay.WhatToDo[MintNotificationLinkInput]


def notification_id(global_id: str) -> int:
    """The numeric id of a Notification global id given in ``notificationId``."""
    return relay.number_id(global_id, TYPE_NAME, "notification", "notificationId")


@strawberry.type
class NotificationMutations:
    @strawberry.mutation(
        description="Mint the magic link an outsider's reminder requests, for exactly its slot "
        "and recipient (integrations only: the sender calls it as it sends). Calling again "
        "revokes the link minted before for the same notification."
    )
    async def mint_notification_link(
        self, info: Info, input: MintNotificationArg
    ) -> MintNotificationLinkPayload:
        async def mint(me: Principal) -> links.Minted:
            return await notification_links.mint(
                info.context.services,
                me,
                notification_id(input.notification_id),
                expires_in=link_types.expiry(input.expires_in),
            )

        work, build = link_types.minting(mint, MintNotificationLinkSuccess)
        return await keyed.answer(info, "mintNotificationLink", input, work, build)
