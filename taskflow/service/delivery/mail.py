"""E-mail delivery: the worker's step that mails deliverable notifications over SMTP.

Each pass takes deliverable notifications that have an address with the same
lease as ``takeNotifications`` (``service/delivery/delivery.py``), so the worker's sender
and outside senders never send one twice. A notification that requests a magic
link gets it minted *at send time*, in the transaction that marks it sent: the
run is locked, the link minted, the mail sent, the notification marked, then
commit; a failed send rolls the link back with it, so the outbox never holds a
token and no live link exists that was never mailed. Temporary failures (4xx,
connection errors, timeouts) are tried again with a backoff; permanent ones
(5xx for the recipient or the message) are dead at once (``core.delivery``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from typing import Any, Protocol

import aiosmtplib
import jinja2

from taskflow import errors
from taskflow.config.mail_config import MailSettings
from taskflow.core.access import addresses
from taskflow.core.delivery import delivery as core
from taskflow.core.delivery import recipients
from taskflow.core.links import links as core_links
from taskflow.core.runs import refusals
from taskflow.service.common.container import Services
from taskflow.service.delivery import delivery, mail_render
from taskflow.service.links import notification_links
from taskflow.service.reports import metrics
from taskflow.store.common import locks
from taskflow.store.delivery import delivery as store
from taskflow.store.delivery import notifications as outbox
from taskflow.store.runs import runs as run_rows

log = logging.getLogger("taskflow.mail")

#: Who mints a reminder's link as it is mailed (on the run's timeline).
ACTOR = "taskflow"
#: How long the worker holds a batch: longer than sending it takes (timeouts included).
LEASE = timedelta(minutes=10)
#: Notifications per pass.
BATCH = 10


class SendFailed(Exception):
    """A send the server (or the network) refused; ``permanent``: retrying cannot help."""

    def __init__(self, text: str, *, permanent: bool) -> None:
        super().__init__(text)
        self.text = text
        self.permanent = permanent


class Sender(Protocol):
    async def send(self, message: EmailMessage) -> None:
        """Send one message, or raise :class:`SendFailed`."""


class SmtpSender:
    """Sends over SMTP with aiosmtplib, one connection per message."""

    def __init__(self, mail: MailSettings) -> None:
        self.mail = mail

    async def send(self, message: EmailMessage) -> None:
        m = self.mail
        client = _Client(
            hostname=m.host,
            port=m.port,
            username=m.username,
            password=m.password,
            use_tls=m.use_tls,
            start_tls=m.start_tls,
            timeout=m.timeout,
        )
        try:
            try:
                async with client:  # connects and logs in; QUIT and close on the way out
                    await client.send_message(message)
            finally:  # sent or refused (a wrong password too): the connection is closed
                await _closed(client.closed_sockets)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            first = exc.recipients[0] if exc.recipients else None
            code = first.code if first is not None else None
            text = f"{code} {first.message}" if first is not None else str(exc)
            raise SendFailed(text, permanent=core.smtp_permanent(code)) from None
        except (aiosmtplib.SMTPRecipientRefused, aiosmtplib.SMTPDataError) as exc:
            # The server refused this recipient or this message: 5xx is final.
            raise SendFailed(
                f"{exc.code} {exc.message}", permanent=core.smtp_permanent(exc.code)
            ) from None
        except aiosmtplib.SMTPResponseException as exc:
            # Authentication, sender, greeting: the settings are wrong, not the notification.
            # Kept temporary, so the mail goes out once the settings are mended.
            raise SendFailed(f"{exc.code} {exc.message}", permanent=False) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            raise SendFailed(
                f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                permanent=False,
            ) from None


#: How long :func:`_closed` waits for connections to close, and how often it looks.
CLOSE_WAIT, CLOSE_LOOK = 2.0, 0.005


class _Client(aiosmtplib.SMTP):
    """aiosmtplib's client, keeping the socket of each connection it closes (see
    :func:`_closed`)."""

    def __init__(self, **options: Any) -> None:
        self.closed_sockets: list[Any] = []
        super().__init__(**options)

    def close(self) -> None:
        if self.transport is not None:
            self.closed_sockets.append(self.transport.get_extra_info("socket"))
        super().close()


async def _closed(sockets: list[Any]) -> None:
    """Return once ``sockets`` (under connections the client closed) are closed, or after
    :data:`CLOSE_WAIT` seconds. Closing a TLS connection (after QUIT, or after a refused
    login) still exchanges close_notify with the server before its socket closes, in later
    turns of the event loop; a sender that returned before that would leave the socket to
    whoever stops the loop next (a worker told to stop, a test's loop), which then finds it
    open."""
    loop = asyncio.get_running_loop()
    until = loop.time() + CLOSE_WAIT
    # Neither the socket nor aiosmtplib's public API offers an event for "closed": look.
    while any(s is not None and s.fileno() != -1 for s in sockets) and loop.time() < until:  # noqa: ASYNC110
        await asyncio.sleep(CLOSE_LOOK)


@dataclass
class Mailer:
    """What the worker sends with: the settings, the templates, the transport."""

    mail: MailSettings
    templates: mail_render.Templates
    sender: Sender
    sent: int = 0
    failed: int = 0

    @classmethod
    def of(cls, services: Services, sender: Sender | None = None) -> Mailer | None:
        """The mailer ``TASKFLOW_SMTP_URL`` asks for (templates compiled now), or None."""
        mail = services.settings.mail
        if mail is None:
            return None
        return cls(mail, mail_render.Templates(mail.templates), sender or SmtpSender(mail))


@dataclass(frozen=True)
class Pass:
    """What one pass did."""

    taken: int = 0
    sent: int = 0
    failed: int = 0
    dead: int = 0


async def deliver_due(services: Services, mailer: Mailer, *, limit: int = BATCH) -> Pass:
    """Take deliverable notifications with an address and mail each (see the module doc)."""
    taken = await delivery.take_as_sender(services, limit=limit, lease=LEASE, with_address=True)
    outcomes: list[str] = []
    for note in taken.notifications:
        try:
            outcomes.append(await _deliver(services, mailer, note, taken.lease))
        except errors.Busy as busy:
            # The run was busy: leave it leased; the lease runs out and it is taken again.
            log.warning("mail for notification %s: %s", note.id, busy.message)
            outcomes.append("later")
        except Exception as exc:
            # A bug or an outage while sending one: the others still go; this one is tried
            # again after the backoff (or, if even that cannot be written, when its lease ends).
            log.exception("mail for notification %s failed unexpectedly", note.id)
            try:
                text = f"{type(exc).__name__}: {exc}"
                outcomes.append(await _failed(services, note, taken.lease, text, False))
            except Exception:
                outcomes.append("later")
    done = Pass(
        taken=len(taken.notifications),
        sent=outcomes.count("sent"),
        failed=outcomes.count("failed"),
        dead=outcomes.count("dead"),
    )
    mailer.sent += done.sent
    mailer.failed += done.failed + done.dead
    for outcome in ("sent", "failed", "dead"):
        if getattr(done, outcome):
            metrics.MAILS.labels(outcome=outcome).inc(getattr(done, outcome))
    if done.taken:
        log.info(
            "mail pass: took %d, sent %d, failed %d, dead %d",
            done.taken,
            done.sent,
            done.failed,
            done.dead,
            extra={
                "taken": done.taken,
                "sent": done.sent,
                "failed": done.failed,
                "dead": done.dead,
            },
        )
    return done


async def _values(services: Services, note: outbox.NotificationRow) -> dict[str, Any] | None:
    async with services.db.connection() as conn:
        run = await run_rows.get_run(conn, note.run_id)
        slot = await run_rows.get_slot(conn, note.slot_id) if note.slot_id else None
    if run is None:
        return None
    attributes = dict(run.view.subject)
    try:
        definition = services.catalog.get(run.view.workflow, run.view.definition_version)
        title = definition.description or run.view.workflow
        shareable = definition.slot(slot.state, slot.name).shareable if slot else ()
    except (errors.NotFound, KeyError):
        title, shareable = run.view.workflow, ()
    if recipients.is_outsider(note.recipient):
        # An outsider sees what the link's page would show them: the shareable fields only.
        attributes = {k: attributes[k] for k in shareable if k in attributes}
    mail = services.settings.mail
    return {
        "kind": note.kind,
        "message": note.message,
        "recipient_name": note.recipient_name,
        "recipient_email": note.recipient_email,
        "workflow": run.view.workflow,
        "workflow_title": title,
        "subject_type": run.subject.type,
        "subject_key": run.subject.external_id,
        "subject": attributes,
        "run_state": run.view.state,
        "deliver_at": note.deliver_at,
        "public_url": services.settings.public_url,
        "reply_to": mail.reply_to if mail is not None else None,
        "link_url": None,
        "link_expires_at": None,
    }


def _render(
    mailer: Mailer, services: Services, note: outbox.NotificationRow, values: dict[str, Any]
) -> EmailMessage:
    try:
        found = mail_render.letter(mailer.templates, values["workflow"], note.kind, values)
    except jinja2.TemplateError as exc:
        # A template bug: temporary, so the mail goes out once the template is mended.
        raise SendFailed(f"template: {type(exc).__name__}: {exc}", permanent=False) from None
    return mail_render.message(mailer.mail, found, services.clock.now(), note.id)


async def _deliver(
    services: Services, mailer: Mailer, note: outbox.NotificationRow, lease: str
) -> str:
    why = addresses.problem(note.recipient_email)
    if why is not None:
        # Stored before addresses were checked (or written around the API): mailing it could
        # reach several people or inject headers. Final: retrying cannot mend the address.
        text = f"not sent: {note.recipient_email!r} is not exactly one e-mail address ({why})"
        return await _failed(services, note, lease, text, True)
    values = await _values(services, note)
    if values is None:
        return "gone"  # its run was deleted (the notification with it)
    try:
        if note.link_requested and note.slot_id is not None:
            return await _with_link(services, mailer, note, lease, values)
        message = _render(mailer, services, note, values)
        await mailer.sender.send(message)
    except SendFailed as failure:
        return await _failed(services, note, lease, failure.text, failure.permanent)
    except (refusals.SlotNotOpen, core_links.LinksNotAllowed) as moot:
        # The slot was done (or cancelled) before the reminder went out: nothing to ask.
        return await _failed(services, note, lease, f"not sent: {moot.message}", True)
    async with services.db.transaction() as conn:
        marked = await store.mark_sent(conn, note.id, lease, services.clock.now())
    if marked is None:
        log.warning("notification %s was sent, but its lease had been taken over", note.id)
    return "sent"


async def _with_link(
    services: Services,
    mailer: Mailer,
    note: outbox.NotificationRow,
    lease: str,
    values: dict[str, Any],
) -> str:
    """Mint, send and mark in one transaction (the run locked first: the lock order)."""
    async with services.db.transaction() as conn:
        await locks.lock_run(conn, note.run_id)
        held = await store.held(conn, note.id, lease)
        if held is None:
            return "lost"
        # A send whose mark did not commit minted a link: revoked, as mintNotificationLink.
        minted = await notification_links.mint_for(services, conn, held, ACTOR)
        values = {**values, "link_url": minted.url, "link_expires_at": minted.link.expires_at}
        await mailer.sender.send(_render(mailer, services, held, values))
        # Sent: mark it in the same transaction as the link, so both or neither stay.
        await store.mark_sent(conn, held.id, lease, services.clock.now())
    return "sent"


async def _failed(
    services: Services, note: outbox.NotificationRow, lease: str, text: str, permanent: bool
) -> str:
    try:
        row = await delivery.failed(services, note.id, lease, error=text, permanent=permanent)
    except core.LeaseLost:
        return "lost"
    log.warning(
        "mail for notification %s to %r failed (%s): %s",
        note.id,
        note.recipient_email,
        row.delivery_state,
        text,
    )
    return "dead" if row.delivery_state == core.DeliveryState.DEAD else "failed"
