"""A real SMTP server on loopback (aiosmtpd) for the e-mail tests: it keeps what it receives
and can refuse a recipient with scripted replies (``refuse``), like a busy or strict server."""

from __future__ import annotations

import email
import email.policy
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


class Inbox:
    """The aiosmtpd handler: received messages, and replies to give instead of accepting."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        #: address -> replies to RCPT TO, used up one per attempt (e.g. "451 4.3.0 busy").
        self.refuse: dict[str, list[str]] = {}

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any
    ) -> str:
        replies = self.refuse.get(address)
        if replies:
            return replies.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        return [
            m for m, (_, rcpt) in zip(self.messages, self.envelopes, strict=True) if address in rcpt
        ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def smtp_server(**options: Any) -> Iterator[tuple[Inbox, int]]:
    """A running SMTP server on 127.0.0.1: (its inbox, its port); ``options`` go to aiosmtpd
    (``tls_context``, ``require_starttls``, ``authenticator``, ``ssl_context``...)."""
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def html_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]
