"""Using a magic link: show what it asks (read only) and complete the slot (once).

Every way a link can fail (tampered, unknown, expired, used, revoked, slot no
longer open) raises the same :class:`LinkUnusable` with the same message, after
the same work (one lookup, one throttle write): an outsider learns nothing about
which. Staff read the reason on the run's timeline (``link.refused``), written
for submissions only: a GET never touches the link, the run or the timeline,
because mail scanners and link previews fetch links before people do.

Opens are counted on submission (see docs/magic-links.md, "Opens"): each form
page carries a signed page token holding the instant it was rendered, so the
first submission records when a person actually had the page in front of them.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from itsdangerous import BadSignature

from taskflow.core.common import refusals as core_refusals
from taskflow.core.definition import fields as fl
from taskflow.core.definition.model import Slot as DeclaredSlot
from taskflow.core.links import links as core
from taskflow.core.runs import refusals
from taskflow.core.runs.model import ACTIVE, CLAIMED, OPEN, AuditEntry, SlotView
from taskflow.service.access import tokens
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.links import links
from taskflow.service.reports import metrics
from taskflow.service.runs import decisions, persist
from taskflow.service.runs import runs as run_service
from taskflow.store.common import db, locks
from taskflow.store.links import links as store

PAGE_SALT = "taskflow.magic-link-page.v1"
#: How long a rendered form may wait before it is sent (then it is shown again, fresh).
PAGE_TTL = timedelta(hours=12)
#: The one answer to every unusable link, whatever the reason.
UNUSABLE = (
    "This link can no longer be used. Please contact the person or team who sent it to you "
    "and ask for a new one."
)
#: Limits of the abuse throttle; tests may replace them.
LIMITS = core.Limits()


PageExpired = core_refusals.PageExpired


@dataclass(frozen=True)
class Page:
    """What the link's page shows: the task, the shareable subject fields, the form."""

    link: core.LinkView
    label: str
    #: Subject fields the definition marks shareable, in declared order.
    shared: tuple[tuple[str, Any], ...]
    fields: tuple[fl.Field, ...]
    #: Signed page nonce for the form (CSRF-safe: only this page has it).
    page_token: str


@dataclass(frozen=True)
class Done:
    """A completed link: what the confirmation page says."""

    link: core.LinkView
    label: str
    completed_at: datetime


@dataclass(frozen=True)
class _Usable:
    link: core.LinkView
    nonce_hash: str
    slot: SlotView
    declared: DeclaredSlot
    subject: Mapping[str, Any]


class _Dead(Exception):
    def __init__(self, why: str, link: core.LinkView | None) -> None:
        super().__init__(why)
        self.why = why
        self.link = link


def client_key(services: Services, address: str | None) -> str:
    """The throttle's key for a client: an HMAC of its address under the signing key.

    A plain hash of an IPv4 address is reversed by hashing all 2**32 of them; keyed
    with the server's secret, the stored key tells nothing to someone who reads the
    table without the key. (Rotating the signing key starts every client afresh.)
    """
    secret = services.settings.secret_keys[0].encode()
    message = f"taskflow.link-client:{address or 'unknown'}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


async def check_throttle(services: Services, client: str) -> None:
    """Refuse a client that must wait (read only)."""
    async with services.db.connection() as conn:
        state = await store.throttle(conn, client)
    left = core.wait_left(state, services.clock.now())
    if left is not None:
        seconds = max(1, math.ceil(left.total_seconds()))
        raise core.Throttled(retry_after=seconds)


async def _usable(services: Services, conn: db.Connection, token: str) -> _Usable:
    """The link and its slot if the token may be used now; :class:`_Dead` otherwise.

    Every path runs the same statement with the same three index probes (a nil
    id stands in for what a bad token cannot name), so how long a refusal takes
    does not tell why; one statement also sees link, run and slot in one
    snapshot, so a link spent concurrently reads as used, not as a done slot.
    """
    now = services.clock.now()
    claims = links.decode(services, token)
    link_id, nonce = claims if claims else (str(store.NO_SUCH_LINK), "")
    target = await store.get_with_target(conn, link_id)
    link, stored_hash = target.link if target.link else (None, "")
    run, slot = target.run, target.slot
    if link is None:
        raise _Dead("tampered" if claims is None else "unknown", None)
    if claims is None or not hmac.compare_digest(stored_hash, links.nonce_hash(nonce)):
        raise _Dead("tampered", None)
    state = core.status(link, now)
    if state != core.ACTIVE:
        raise _Dead(state, link)
    if (
        run is None
        or slot is None
        or run.view.status != ACTIVE
        or slot.visit != run.view.visit
        or slot.status not in (OPEN, CLAIMED)
    ):
        raise _Dead("slot no longer open", link)
    declared = run_service.definition_for(services, run.view).slot(slot.state, slot.name)
    return _Usable(link, stored_hash, slot, declared, run.view.subject)


async def _refuse(services: Services, client: str, dead: _Dead, *, on_timeline: bool) -> NoReturn:
    """Count the refusal against the client (and tell staff why), then refuse alike."""
    now = services.clock.now()
    async with services.db.transaction() as conn:
        if on_timeline and dead.link is not None:
            await locks.lock_run(conn, dead.link.run_id)  # the lock order: the run first
        state = await store.lock_throttle(conn, client, now)
        await store.save_throttle(conn, client, core.after_refusal(state, now, LIMITS))
        if on_timeline and dead.link is not None:
            await persist.audit(
                conn,
                dead.link.run_id,
                AuditEntry(
                    "link.refused",
                    now,
                    dead.link.recipient_key,
                    dead.link.slot_id,
                    dead.why,
                    {"link": dead.link.id, "why": dead.why},
                ),
            )
    raise core.LinkUnusable(UNUSABLE)


def _page_token(services: Services, link_id: str, now: datetime) -> str:
    signer = tokens.serializer(services.settings.secret_keys, PAGE_SALT)
    return str(signer.dumps([link_id, secrets.token_urlsafe(12), int(now.timestamp())]))


def _page_rendered_at(services: Services, page_token: str | None, link_id: str) -> datetime:
    """When the form being submitted was rendered; :class:`PageExpired` if it is not ours."""
    now = services.clock.now()
    try:
        claims: Any = tokens.serializer(services.settings.secret_keys, PAGE_SALT).loads(
            page_token or ""
        )
        rendered = datetime.fromtimestamp(int(claims[2]), UTC)
        ours = claims[0] == link_id
    except (BadSignature, TypeError, ValueError, IndexError, KeyError, OverflowError):
        ours, rendered = False, now
    if not ours or not now - PAGE_TTL <= rendered <= now:
        raise PageExpired(
            "This form was open for too long or did not come from this page. Check your "
            "answers and send it again."
        )
    return rendered


async def open_page(
    services: Services, token: str, client: str, *, submitting: bool = False
) -> Page:
    """What the link asks. Writes nothing, except a refusal's count against the client
    (and, ``submitting`` files before the completion, the refusal's line on the timeline,
    as :func:`complete` writes it)."""
    await check_throttle(services, client)
    try:
        async with services.db.connection() as conn:
            usable = await _usable(services, conn, token)
    except _Dead as dead:
        await _refuse(services, client, dead, on_timeline=submitting)
    subject = usable.subject
    return Page(
        link=usable.link,
        label=usable.slot.label,
        shared=tuple((k, subject[k]) for k in usable.declared.shareable if k in subject),
        fields=tuple(usable.declared.fields),
        page_token=_page_token(services, usable.link.id, services.clock.now()),
    )


@retry.retried("complete through the link")
async def complete(
    services: Services,
    token: str,
    payload: Mapping[str, Any] | None,
    client: str,
    *,
    page_token: str | None = None,
    from_page: bool = False,
) -> Done:
    """Spend the link and complete its slot in one transaction: one success, ever.

    ``from_page`` submissions carry the raw form (our page's own keys are dropped)
    and must carry the page token of a form we rendered (GraphQL callers send
    JSON, which a cross-site form cannot).
    """
    await check_throttle(services, client)
    now = services.clock.now()
    try:
        try:
            async with services.db.transaction() as conn:
                usable = await _usable(services, conn, token)
                link = usable.link
                rendered = _page_rendered_at(services, page_token, link.id) if from_page else now
                if from_page:
                    payload = core.payload_from_form(usable.declared.fields, payload or {})
                # The run's lock first (the lock order), then the link row; the decision's
                # one instant is read once the run is held.
                await locks.lock_run(conn, link.run_id)
                now = services.clock.now()
                spent = await store.consume(conn, link.id, usable.nonce_hash, now, rendered)
                if spent is None:
                    raise _Dead("used", link)  # a concurrent submission won
                await run_service.decide(
                    services,
                    conn,
                    link.run_id,
                    decisions.depositing(
                        link.slot_id,
                        link.event,
                        payload,
                        actor=link.recipient_key,
                        actor_keys=frozenset({link.recipient_key}),
                        on_behalf=True,  # the link is the permission
                    ),
                    now=now,
                )
                await persist.audit(conn, link.run_id, *_use_lines(link, spent, now))
        except (refusals.SlotNotOpen, refusals.RunNotActive, refusals.StaleVersion) as refusal:
            raise _Dead("slot no longer open", usable.link) from refusal
    except _Dead as dead:
        await _refuse(services, client, dead, on_timeline=True)
    except fl.PayloadError:
        await _count_open(services, usable.link, rendered)
        raise
    metrics.completed("link")
    return Done(spent, usable.slot.label, now)


def _use_lines(
    before: core.LinkView, spent: core.LinkView, now: datetime
) -> tuple[AuditEntry, ...]:
    used = AuditEntry(
        "link.used",
        now,
        spent.recipient_key,
        spent.slot_id,
        f"completed by {spent.recipient_email} through a magic link",
        {"link": spent.id, "recipient": spent.recipient_email, "opens": spent.opens},
    )
    return (_opened_line(spent), used) if before.opened_at is None else (used,)


def _opened_line(link: core.LinkView) -> AuditEntry:
    assert link.opened_at is not None
    return AuditEntry(
        "link.opened",
        link.opened_at,
        link.recipient_key,
        link.slot_id,
        f"first submitted by {link.recipient_email}",
        {"link": link.id, "opens": link.opens},
    )


async def _count_open(services: Services, link: core.LinkView, rendered: datetime) -> None:
    """A submission that did not spend the link (a field was wrong) still counts as an open."""
    async with services.db.transaction() as conn:
        # The run before the link row (the lock order), as completing with the link does.
        await locks.lock_run(conn, link.run_id)
        counted = await store.count_open(conn, link.id, services.clock.now(), rendered)
        if counted is not None and link.opened_at is None and counted.opens == 1:
            await persist.audit(conn, link.run_id, _opened_line(counted))
