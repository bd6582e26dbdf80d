"""The SMTP transport against a real server with TLS and a login (aiosmtpd on loopback).

``smtp://user:pass@host:port?starttls=true`` upgrades with STARTTLS before it logs
in; ``smtps://`` speaks TLS from the first byte. The server's certificate is a
self-signed one made here (openssl), trusted through ``SSL_CERT_FILE``: the
sender verifies certificates as it would against a real server. A wrong
password is a temporary failure (the settings are wrong, not the message).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import AuthResult, LoginPassword

from taskflow.config import mail_config
from taskflow.service.delivery import mail
from tests import smtp_server, tls

pytestmark = pytest.mark.anyio


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return tls.trusted_certificate(tmp_path, monkeypatch, "127.0.0.1", "IP:127.0.0.1")


def _server_tls(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(certificate[0]), str(certificate[1]))
    return context


def _authenticator(
    server: Any, session: Any, envelope: Any, mechanism: str, data: Any
) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (b"mailer", b"s3cret")
    # handled=False: the server answers a failure itself (535).
    return AuthResult(success=ok, handled=False)


def _message() -> EmailMessage:
    message = EmailMessage()
    message["From"] = "taskflow@buyer.example"
    message["To"] = "docs@vendor.example"
    message["Subject"] = "Reminder"
    message.set_content("Upload the bank details.")
    return message


@pytest.fixture
def starttls_server(certificate: tuple[Path, Path]) -> Iterator[tuple[smtp_server.Inbox, int]]:
    with smtp_server.smtp_server(
        tls_context=_server_tls(certificate),
        require_starttls=True,
        authenticator=_authenticator,
        auth_required=True,
    ) as running:
        yield running


async def test_starttls_then_login(starttls_server: tuple[smtp_server.Inbox, int]) -> None:
    inbox, port = starttls_server
    settings = mail_config.parse_url(f"smtp://mailer:s3cret@127.0.0.1:{port}?starttls=true")
    await mail.SmtpSender(settings).send(_message())
    assert [m["Subject"] for m in inbox.messages] == ["Reminder"]


async def test_a_wrong_password_is_a_temporary_failure(
    starttls_server: tuple[smtp_server.Inbox, int],
) -> None:
    inbox, port = starttls_server
    settings = mail_config.parse_url(f"smtp://mailer:wrong@127.0.0.1:{port}?starttls=true")
    with pytest.raises(mail.SendFailed) as failed:
        await mail.SmtpSender(settings).send(_message())
    assert failed.value.permanent is False
    assert failed.value.text.startswith("535")
    assert inbox.messages == []


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")
async def test_smtps_speaks_tls_from_the_first_byte(certificate: tuple[Path, Path]) -> None:
    with smtp_server.smtp_server(
        ssl_context=_server_tls(certificate),
        authenticator=_authenticator,
        auth_required=True,
        # aiosmtpd sees STARTTLS only as TLS; this connection is TLS from the start.
        auth_require_tls=False,
    ) as (inbox, port):
        settings = mail_config.parse_url(f"smtps://mailer:s3cret@127.0.0.1:{port}")
        await mail.SmtpSender(settings).send(_message())
        assert len(inbox.messages) == 1
