"""Magic links for reminders: the sender mints one when it sends an outsider's notification.

A reminder declared ``with_link=True`` writes, for each outsider it reaches, a
notification that *requests* a link (``link_requested``); the outbox never
holds a URL, because the token must exist only in the mail (the database keeps
the nonce's hash). The mailer, an integration principal, calls
:func:`mint` as it sends: a link for exactly that notification's slot and
recipient, returned once. Calling again (a retried send, a resend) revokes the
link minted before for the same notification, so at most one is live per
notification.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from taskflow.core.access.principals import Principal
from taskflow.core.links import links as core
from taskflow.core.runs.model import AuditEntry
from taskflow.service.access import access
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.delivery import delivery
from taskflow.service.links import links
from taskflow.service.runs import persist
from taskflow.service.runs import runs as run_service
from taskflow.store.common import db, locks
from taskflow.store.delivery import notifications as outbox
from taskflow.store.links import links as link_rows


@retry.retried("mint a link")
async def mint(
    services: Services,
    actor: Principal,
    notification_id: int,
    *,
    expires_in: timedelta | None = None,
) -> links.Minted:
    """Mint the link a notification requests, for its slot and recipient; revoke the last one."""
    access.require_integration(actor, "mint links for notifications")
    found = await delivery.reachable(services, actor, notification_id)

    async def work() -> links.Minted:
        async with services.db.transaction() as conn:
            # The lock order (docs/architecture.md): the run first, as completing with a link.
            await locks.lock_run(conn, found.run_id)
            # The notification's lock makes two sends of it mint in turn, never two live links.
            note = await outbox.notification(conn, notification_id, lock=True)
            assert note is not None  # notifications are deleted only with their run
            if not note.link_requested or note.slot_id is None or not note.recipient_email:
                raise core.LinkNotRequested(
                    f"Notification {notification_id} asks for no magic link: only a reminder "
                    "declared with_link=True writes outsiders notifications that do."
                )
            return await mint_for(services, conn, note, actor.id, expires_in)

    return await run_service.refusals_recorded(
        services, found.run_id, actor.id, "mint link", work, slot_id=found.slot_id
    )


async def mint_for(
    services: Services,
    conn: db.Connection,
    note: outbox.NotificationRow,
    actor: str,
    expires_in: timedelta | None = None,
) -> links.Minted:
    """Inside the caller's transaction (the run and the notification held): revoke the
    notification's previous link, mint a new one for its slot and recipient, note it."""
    assert note.slot_id is not None
    assert note.recipient_email is not None
    # Revoke before minting (the run is held: no link completes meanwhile).
    if note.link_id is not None:
        await replace_previous(conn, note, actor, services.clock.now())
    minted = await links.mint_in(
        services,
        conn,
        run_id=note.run_id,
        slot_id=note.slot_id,
        recipient_name=note.recipient_name,
        recipient_email=note.recipient_email,
        expires_in=expires_in,
        actor=actor,
        details={"notification": note.id, "reminder": note.message},
    )
    await outbox.set_link(conn, note.id, minted.link.id)
    return minted


async def replace_previous(
    conn: db.Connection, note: outbox.NotificationRow, actor: str, now: datetime
) -> None:
    """Revoke the notification's previous link if it is still unused (used: nothing to do)."""
    assert note.link_id is not None
    revoked = await link_rows.revoke(conn, note.link_id, actor, now)
    if revoked is None:
        return
    await persist.audit(
        conn,
        note.run_id,
        AuditEntry(
            "link.revoked",
            now,
            actor,
            note.slot_id,
            f"link for {revoked.recipient_email}, replaced by a new one for the same reminder",
            {
                "link": revoked.id,
                "recipient": revoked.recipient_email,
                "notification": note.id,
            },
        ),
    )
