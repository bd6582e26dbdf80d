"""Magic links in GraphQL: mint and revoke (staff), list on a slot, complete with a link.

``completeWithLink`` needs no staff token (the link is the permission) and
answers exactly as the HTML page does: every unusable link gets the same
``LinkUnusable`` refusal with the same message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from enum import Enum
from typing import Annotated, TypeVar

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.targets import OnSlot
from taskflow.core.access.principals import Principal
from taskflow.core.common import refusals
from taskflow.core.definition import fields as fl
from taskflow.core.links import links as core
from taskflow.service.files import files as file_service
from taskflow.service.links import link_use, links

TYPE_NAME = "MagicLink"
S = TypeVar("S")
SLOT = "Slot"


@strawberry.enum(description="Where a magic link stands.")
class LinkStatus(Enum):
    ACTIVE = strawberry.enum_value(core.ACTIVE, description="It may still be used.")
    USED = strawberry.enum_value(core.USED, description="It completed its slot.")
    REVOKED = strawberry.enum_value(core.REVOKED, description="Staff revoked it.")
    EXPIRED = strawberry.enum_value(core.EXPIRED, description="Its time ran out unused.")


@strawberry.type(
    name="MagicLink",
    description="A signed single-use link that lets someone without an account complete a slot.",
)
class MagicLinkType(relay.Node):
    slot_id: strawberry.ID = strawberry.field(description="Global id of the slot it completes.")
    event: str = strawberry.field(description="The one event it may deposit.")
    recipient_name: str | None = strawberry.field(description="Whom it was sent to.")
    recipient_email: str = strawberry.field(description="The address it was sent to.")
    status: LinkStatus = strawberry.field(description="Active, used, revoked or expired.")
    created_by: str = strawberry.field(description="Login of whoever minted it.")
    created_at: datetime = strawberry.field(description="When it was minted.")
    expires_at: datetime = strawberry.field(description="When it stops working.")
    used_at: datetime | None = strawberry.field(description="When it completed its slot.")
    revoked_at: datetime | None = strawberry.field(description="When it was revoked.")
    revoked_by: str | None = strawberry.field(description="Login of whoever revoked it.")
    opens: int = strawberry.field(
        description="How many times its form was submitted (page views are not counted: mail "
        "scanners fetch links before people do)."
    )
    opened_at: datetime | None = strawberry.field(
        description="When the page first submitted was shown to its recipient."
    )

    @classmethod
    def of(cls, link: core.LinkView, now: datetime) -> MagicLinkType:
        return relay.copied(
            cls,
            link,
            slot_id=relay.node_id(SLOT, link.slot_id),
            status=LinkStatus(core.status(link, now)),
            used_at=link.consumed_at,
        )


async def resolve_node(info: Info, local_id: str) -> MagicLinkType | None:
    me = await caller(info)
    link = await links.get(info.context.services, me, local_id)
    return MagicLinkType.of(link, info.context.services.clock.now()) if link else None


async def links_of_slot(info: Info, slot_global_id: str) -> list[MagicLinkType]:
    """``Slot.links``: the slot's links, for staff who may see the slot."""
    me = await caller(info)
    _, local = relay.from_global_id(slot_global_id)
    now = info.context.services.clock.now()
    return [MagicLinkType.of(k, now) for k in await links.of_slot(info.context.services, me, local)]


# -- refusals ------------------------------------------------------------------------------------


LinkUnusable = r.LinkUnusable
LinksNotAllowed = r.LinksNotAllowed
RecipientNotAllowed = r.RecipientNotAllowed
TooManyRequests = r.TooManyRequests
#: The typed refusal of a link use case's error (shared with mintNotificationLink).
refusal = r.refusal_for


# -- inputs and payloads -------------------------------------------------------------------------


@strawberry.input(description="Who a magic link is for.")
class MagicLinkRecipientInput:
    name: str | None = strawberry.field(default=None, description="Their name, for the page.")
    email: str = strawberry.field(description="Their e-mail address (shown to staff, audited).")


@strawberry.input(description="Mint a magic link for a slot.")
class MintMagicLinkInput(OnSlot):
    recipient: MagicLinkRecipientInput = strawberry.field(description="Whom it is for.")
    expires_in: int | None = strawberry.field(
        default=None, description="Seconds until it stops working (default 7 days, at most 30)."
    )
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Revoke a magic link.")
class RevokeMagicLinkInput:
    link_id: strawberry.ID = strawberry.field(description="The link's global id.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="Complete a slot with a magic link (for a custom page).")
class CompleteWithLinkInput:
    token: str = strawberry.field(description="The token: the last part of the link's URL.")
    payload: JSON = strawberry.field(description="The payload (the slot's fields, a JSON object).")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type
class MintedLink:
    """What a mint mutation answers (its success, the one type the schema names): the new
    link, its URL and its token."""

    link: MagicLinkType = strawberry.field(description="The link as stored.")
    url: str = strawberry.field(description="The link to send (on TASKFLOW_PUBLIC_URL).")
    token: str = strawberry.field(description="The token alone, for a custom page.")


@strawberry.type(description="A new magic link. The URL and token are shown once, never again.")
class MintMagicLinkSuccess(MintedLink):
    pass


@strawberry.type(description="The link was revoked.")
class RevokeMagicLinkSuccess:
    link: MagicLinkType = strawberry.field(description="The link as it stands now.")


@strawberry.type(description="The link completed its slot.")
class CompleteWithLinkSuccess:
    label: str = strawberry.field(description="What was asked, as the page showed it.")
    completed_at: datetime = strawberry.field(description="When the slot was completed.")


MintMagicLinkPayload = Annotated[
    MintMagicLinkSuccess | LinksNotAllowed | RecipientNotAllowed | r.SlotNotOpen | relay.Common,
    strawberry.union("MintMagicLinkPayload", description="Result of mintMagicLink."),
]
RevokeMagicLinkPayload = Annotated[
    RevokeMagicLinkSuccess
    | LinkUnusable
    | relay.NotAllowed
    | relay.NotFoundRefusal
    | relay.Keyed
    | relay.InvalidInput,
    strawberry.union("RevokeMagicLinkPayload", description="Result of revokeMagicLink."),
]
CompleteWithLinkPayload = Annotated[
    CompleteWithLinkSuccess
    | LinkUnusable
    | TooManyRequests
    | r.PayloadInvalid
    | relay.Keyed
    | relay.InvalidInput,
    strawberry.union("CompleteWithLinkPayload", description="Result of completeWithLink."),
]

MintArg = relay.WhatToDo[MintMagicLinkInput]
RevokeArg = relay.WhatToDo[RevokeMagicLinkInput]
CompleteArg = relay.WhatToDo[CompleteWithLinkInput]


def _client(info: Info) -> str:
    request = info.context.request
    host = request.client.host if request is not None and request.client else None
    return link_use.client_key(info.context.services, host)


@strawberry.type
class LinkMutations:
    @strawberry.mutation(
        description="Mint a single-use link that completes a slot (holder, delegates, leads, "
        "managers, the application that started the run; only where the slot's definition "
        "allows links), for an address the slot's candidates or its outsiders rule name."
    )
    async def mint_magic_link(self, info: Info, input: MintArg) -> MintMagicLinkPayload:
        async def mint(me: Principal) -> links.Minted:
            return await links.mint(
                info.context.services,
                me,
                relay.local_id(input.slot_id, SLOT, "slotId"),
                recipient_name=input.recipient.name,
                recipient_email=input.recipient.email,
                expires_in=expiry(input.expires_in),
            )

        work, build = minting(mint, MintMagicLinkSuccess)
        return await keyed.answer(info, "mintMagicLink", input, work, build)

    @strawberry.mutation(description="Revoke a magic link that is not used yet.")
    async def revoke_magic_link(self, info: Info, input: RevokeArg) -> RevokeMagicLinkPayload:
        services = info.context.services

        async def work(me: Principal) -> keyed.Answer:
            link = await links.revoke(
                services, me, relay.local_id(input.link_id, TYPE_NAME, "linkId")
            )
            return {"link": link.id}

        async def build(
            info: Info, me: Principal, answer: keyed.Answer, _: bool
        ) -> RevokeMagicLinkSuccess:
            link = await links.get(services, me, str(answer["link"]))
            if link is None:
                raise errors.NotFound(f"No magic link has the id {input.link_id!r}.")
            return RevokeMagicLinkSuccess(link=MagicLinkType.of(link, services.clock.now()))

        return await keyed.answer(info, "revokeMagicLink", input, work, build)

    @strawberry.mutation(
        description="Complete the slot a magic link is for, with its payload; no staff token "
        "needed. Works once."
    )
    async def complete_with_link(self, info: Info, input: CompleteArg) -> CompleteWithLinkPayload:
        services = info.context.services
        payload = input.payload if isinstance(input.payload, dict) else None

        async def work() -> keyed.Answer:
            if payload is None:
                raise fl.PayloadError([fl.FieldProblem("payload", "must be a JSON object")])
            # The one rule completeSlot follows: a reference is the caller's JSON, so the
            # stored bytes must be there, be the size and sniffed type it claims, and have
            # been uploaded through this link. A token that does not decode names no link:
            # link_use.complete refuses it as every bad token is refused.
            claims = links.decode(services, input.token)
            if claims is not None:
                uploader = file_service.link_uploader(claims[0])
                await file_service.check_stored(services, payload, uploader)
            done = await link_use.complete(services, input.token, payload, _client(info))
            return {"label": done.label, "completed_at": done.completed_at.isoformat()}

        # The link is the caller here: its keys are the link's own (by a hash of its token).
        holder = "link:" + hashlib.sha256(input.token.encode("utf-8", "replace")).hexdigest()
        try:
            answer, _ = await keyed.once(info, holder, "completeWithLink", input, work)
        except errors.TaskflowError as exc:
            refused: CompleteWithLinkPayload = refusal(exc)
            return refused
        return CompleteWithLinkSuccess(
            label=answer["label"], completed_at=datetime.fromisoformat(answer["completed_at"])
        )


def expiry(seconds: int | None) -> timedelta | None:
    return timedelta(seconds=seconds) if seconds is not None else None


def minting(
    mint: Callable[[Principal], Awaitable[links.Minted]], success: Callable[..., S]
) -> tuple[keyed.Work, keyed.Build[S]]:
    """The work and build of a mint mutation: the link this request minted, its URL and
    token shown once; a retry with the same key is refused (:func:`shown_once`)."""
    made: list[links.Minted] = []

    async def work(me: Principal) -> keyed.Answer:
        made.append(await mint(me))
        return {"link": made[0].link.id}

    async def build(info: Info, _: Principal, answer: keyed.Answer, again: bool) -> S:
        if again:
            raise shown_once(str(answer["link"]))
        minted = made[0]
        now = info.context.services.clock.now()
        return success(link=MagicLinkType.of(minted.link, now), url=minted.url, token=minted.token)

    return work, build


def shown_once(link_id: str) -> errors.TaskflowError:
    """The answer to a retried mint: its URL and token are shown once and never kept."""
    return refusals.IdempotencyKeyReused(
        f"The first request with this idempotencyKey minted the link "
        f"{relay.to_global_id(TYPE_NAME, link_id)}; its URL and token are shown only once "
        "and are not kept. Revoke that link (revokeMagicLink) and mint again with a new key."
    )
