"""Magic links for staff: mint, revoke, list (using one is in :mod:`link_use`).

A token is ``[link id, nonce]`` signed with itsdangerous under a salt of its
own (a staff token never verifies as a link, nor the reverse), with the keys of
``TASKFLOW_SECRET_KEYS``: the newest signs, all verify, removing a key retires
its links. The database keeps the SHA-256 of the nonce, never the token, so the
link is the only copy of the permission. Expiry, use and revocation live in
the row, not in the token: they can change after the mail is sent.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from itsdangerous import BadSignature

from taskflow import errors
from taskflow.core.access import access as access_rules
from taskflow.core.access import addresses
from taskflow.core.access.principals import Principal
from taskflow.core.definition import audience as au
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Slot
from taskflow.core.links import links as core
from taskflow.core.runs import refusals
from taskflow.core.runs.model import CLAIMED, OPEN, AuditEntry, SlotView
from taskflow.service.access import access, tokens
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.runs import persist
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import views as slot_views
from taskflow.store.common import db
from taskflow.store.links import links as store
from taskflow.store.runs import runs as rows

LINK_SALT = "taskflow.magic-link.v1"
DEFAULT_TTL = timedelta(days=7)
MAX_TTL = timedelta(days=30)


@dataclass(frozen=True)
class Minted:
    """A new link: the token and URL exist only here, once; the row keeps a hash."""

    link: core.LinkView
    token: str
    url: str


def nonce_hash(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


def sign(services: Services, link_id: str, nonce: str) -> str:
    return str(tokens.serializer(services.settings.secret_keys, LINK_SALT).dumps([link_id, nonce]))


def decode(services: Services, token: str) -> tuple[str, str] | None:
    """(link id, nonce) of a token this deployment signed; None for anything else."""
    try:
        claims: Any = tokens.serializer(services.settings.secret_keys, LINK_SALT).loads(token)
    except BadSignature:
        return None
    if (
        not isinstance(claims, list)
        or len(claims) != 2
        or not all(isinstance(c, str) for c in claims)
    ):
        return None
    return claims[0], claims[1]


def url_of(services: Services, token: str) -> str:
    """The link's address, on the configured public URL (never a request's Host header)."""
    return f"{services.settings.public_url}/l/{token}"


async def _run_of(services: Services, slot: SlotView) -> rows.RunRow:
    """The slot's run: its workflow and who started it decide who manages its links."""
    async with services.db.connection() as conn:
        run = await rows.get_run(conn, slot.run_id)
    assert run is not None  # slots are deleted only with their run
    return run


def _may_read(actor: Principal, run: rows.RunRow, slot: SlotView) -> bool:
    return access_rules.may_read_links(actor, run.view.workflow, slot, run.started_by)


def require_recipient(
    declared: Slot, slot: SlotView, subject: Mapping[str, Any], email: str
) -> None:
    """Refuse a link to an address the slot's candidates and ``outsiders`` rule do not name.

    Candidates admit an address through their ``email:`` keys only (an outsider is
    no principal: ``anyone`` and roles never reach them); ``outsiders`` is resolved
    against the subject and the slot's item, and may admit anyone (``who.anyone()``).
    """
    addresses = {f"email:{email}", f"email:{email.lower()}"}
    if any(slot.audience.admits(frozenset({key})) for key in addresses):
        return
    if declared.outsiders is not None:
        item = slot.item if slot.item_index is not None else ex.MISSING
        rule = au.compile(declared.outsiders, subject, item)
        if any(rule.admits(frozenset({au.ANY_KEY, key})) for key in addresses):
            return
    rule_text = f"; outsiders: {au.describe(declared.outsiders)}" if declared.outsiders else ""
    raise core.RecipientNotAllowed(
        f"{email!r} may not receive a link for slot {declared.name!r}: a link goes to an "
        f"address the slot's candidates name ({slot.audience}{rule_text}); send it to that "
        "address, or declare outsiders=... on the slot."
    )


def _recipient(name: str | None, email: str) -> tuple[str | None, str]:
    email = addresses.check(email.strip(), "recipient.email")
    return (name.strip() or None) if name else None, email


def _ttl(expires_in: timedelta | None) -> timedelta:
    ttl = DEFAULT_TTL if expires_in is None else expires_in
    if not timedelta(0) < ttl <= MAX_TTL:
        raise errors.ValidationError(
            f"expiresIn must be between 1 second and {MAX_TTL.days} days.", field="expiresIn"
        )
    return ttl


@retry.retried("mint a link")
async def mint(
    services: Services,
    actor: Principal,
    slot_id: str,
    *,
    recipient_name: str | None,
    recipient_email: str,
    expires_in: timedelta | None = None,
) -> Minted:
    """A link that completes ``slot_id`` once, for someone without an account."""
    ttl = _ttl(expires_in)
    name, email = _recipient(recipient_name, recipient_email)
    slot = await slot_views.visible_slot(services, actor, slot_id)

    async def work() -> Minted:
        async with services.db.transaction() as conn:
            return await mint_in(
                services,
                conn,
                run_id=slot.run_id,
                slot_id=slot_id,
                recipient_name=name,
                recipient_email=email,
                expires_in=ttl,
                actor=actor.id,
                check=lambda run, current: access.require_manage_links(
                    actor, run.view.workflow, current, run.started_by, "mint"
                ),
                chosen_recipient=True,
            )

    return await run_service.refusals_recorded(
        services, slot.run_id, actor.id, "mint link", work, slot_id=slot_id
    )


async def mint_in(
    services: Services,
    conn: db.Connection,
    *,
    run_id: str,
    slot_id: str,
    recipient_name: str | None,
    recipient_email: str,
    expires_in: timedelta | None = None,
    actor: str = "taskflow",
    check: Callable[[rows.RunRow, SlotView], None] | None = None,
    details: Mapping[str, Any] | None = None,
    chosen_recipient: bool = False,
) -> Minted:
    """Mint inside the caller's transaction (a reminder action mints this way, as ``taskflow``).

    Takes the run's lock, so the slot cannot be completed or cancelled meanwhile;
    refuses slots whose definition allows no links and slots that are not open.
    Whoever sends the URL must not store it: the database keeps only the hash.
    ``details`` go on the ``link.minted`` line (e.g. the notification it is for).
    ``chosen_recipient``: the caller chose the address (staff minting), so it must be
    one the slot's rules name (:func:`require_recipient`); a reminder's recipients
    come from the definition's own ``notify`` rule.
    """
    ttl = _ttl(expires_in)
    name, email = _recipient(recipient_name, recipient_email)
    run = await rows.get_run(conn, run_id, lock=True)
    now = services.clock.now()  # once the run is held: the line's instant follows its order
    current = await rows.get_slot(conn, slot_id)
    if run is None or current is None or current.run_id != run_id:
        raise errors.NotFound(f"No slot has the id {slot_id!r}.")
    declared = run_service.definition_for(services, run.view).slot(current.state, current.name)
    if not declared.magic_link:
        raise core.LinksNotAllowed(
            f"Slot {current.name!r} of {run.view.workflow!r} may not be completed by a "
            "magic link; its definition would need magic_link=True."
        )
    if check is not None:
        check(run, current)
    if chosen_recipient:
        require_recipient(declared, current, run.view.subject, email)
    if current.status not in (OPEN, CLAIMED) or current.visit != run.view.visit:
        raise refusals.SlotNotOpen(
            f"The slot is {current.status}: a link could not complete it.",
            status=current.status,
        )
    nonce = secrets.token_urlsafe(16)
    link = core.LinkView(
        id=str(uuid.uuid4()),
        run_id=run_id,
        slot_id=slot_id,
        event=current.waits_for,
        recipient_name=name,
        recipient_email=email,
        created_by=actor,
        created_at=now,
        expires_at=now + ttl,
    )
    await store.insert(conn, link, nonce_hash(nonce))
    await persist.audit(
        conn,
        run_id,
        AuditEntry(
            "link.minted",
            now,
            actor,
            slot_id,
            f"link for {email}",
            {
                "link": link.id,
                "recipient": email,
                "recipient_name": name,
                "expires_at": link.expires_at.isoformat(),
                **(details or {}),
            },
        ),
    )
    token = sign(services, link.id, nonce)
    return Minted(link, token, url_of(services, token))


@retry.retried("revoke the link")
async def revoke(services: Services, actor: Principal, link_id: str) -> core.LinkView:
    """Make a link unusable for good (its minter, or whoever may mint for the slot)."""
    async with services.db.connection() as conn:
        found = await store.get(conn, link_id)
    if found is None:
        raise errors.NotFound(f"No magic link has the id {link_id!r}.")
    link = found[0]
    slot = await slot_views.visible_slot(services, actor, link.slot_id)
    if link.created_by != actor.id:
        run = await _run_of(services, slot)
        access.require_manage_links(actor, run.view.workflow, slot, run.started_by, "revoke")
    now = services.clock.now()
    async with services.db.transaction() as conn:
        revoked = await store.revoke(conn, link_id, actor.id, now)
        if revoked is None:
            # Used or revoked meanwhile: say which, as it stands now.
            now_found = await store.get(conn, link_id)
            state = core.status(now_found[0] if now_found else link, now)
            raise core.LinkUnusable(
                f"The link is already {state} and cannot be revoked.", status=state
            )
        await persist.audit(
            conn,
            link.run_id,
            AuditEntry(
                "link.revoked",
                now,
                actor.id,
                link.slot_id,
                f"link for {link.recipient_email}",
                {"link": link.id, "recipient": link.recipient_email},
            ),
        )
    return revoked


async def of_slot(services: Services, actor: Principal, slot_id: str) -> list[core.LinkView]:
    """The links minted for a slot, oldest first, for who may read them (else none)."""
    slot = await slot_views.visible_slot(services, actor, slot_id)
    if not _may_read(actor, await _run_of(services, slot), slot):
        return []
    async with services.db.connection() as conn:
        return await store.of_slot(conn, slot_id)


async def get(services: Services, actor: Principal, link_id: str) -> core.LinkView | None:
    """A link by id, if the actor may see its slot; None otherwise (the two look alike)."""
    async with services.db.connection() as conn:
        found = await store.get(conn, link_id)
    if found is None:
        return None
    slot = await access.unless_hidden(slot_views.visible_slot(services, actor, found[0].slot_id))
    if slot is None or not _may_read(actor, await _run_of(services, slot), slot):
        return None
    return found[0]
