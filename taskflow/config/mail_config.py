"""E-mail settings: ``TASKFLOW_SMTP_URL``, ``TASKFLOW_MAIL_FROM``, ``_REPLY_TO``, ``_TEMPLATES``.

With ``TASKFLOW_SMTP_URL`` set, the worker sends notifications by e-mail
(docs/delivery.md); without it nothing is mailed and outside senders may take the
outbox through GraphQL. The URL is ``smtp://[user:password@]host[:port][?options]``
(STARTTLS when ``starttls=true``; by default used when the server offers it) or
``smtps://...`` (TLS from the first byte, port 465 by default). Options:
``starttls=true|false``, ``timeout=<seconds>`` (default 30).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from email.headerregistry import Address
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from taskflow import errors

DEFAULT_FROM = "taskflow@localhost"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class MailSettings:
    """Where and as whom to send e-mail (the password never shows in a repr)."""

    host: str
    port: int
    #: smtps://: TLS from the first byte.
    use_tls: bool
    #: STARTTLS: True requires it, False never, None when the server offers it.
    start_tls: bool | None
    username: str | None
    password: str | None = field(repr=False)
    sender: str = DEFAULT_FROM
    reply_to: str | None = None
    #: A folder of templates overriding the defaults (per workflow in sub-folders).
    templates: Path | None = None
    timeout: float = DEFAULT_TIMEOUT


def _flag(name: str, text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise errors.ConfigError(f"TASKFLOW_SMTP_URL: {name}={text!r} is not true or false.")


def _address(name: str, text: str) -> str:
    _, address = parseaddr(text)
    try:
        Address(addr_spec=address)
    except (ValueError, IndexError):
        address = ""
    if "@" not in address or any(c in text for c in "\r\n"):
        raise errors.ConfigError(
            f"{name}={text!r} is not an e-mail address: write e.g. taskflow@example.com or "
            '"Taskflow <taskflow@example.com>".'
        )
    return text.strip()


def parse_url(url: str) -> MailSettings:
    """The server part of the settings from ``TASKFLOW_SMTP_URL``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise errors.ConfigError(
            "TASKFLOW_SMTP_URL must look like smtp://user:password@host:587?starttls=true or "
            "smtps://user:password@host:465 (smtp://localhost:8025 for a local test server)."
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port == -1:
        raise errors.ConfigError("TASKFLOW_SMTP_URL: the port is not a number from 1 to 65535.")
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(options) - {"starttls", "timeout"}
    if unknown:
        raise errors.ConfigError(
            f"TASKFLOW_SMTP_URL: unknown option(s) {', '.join(sorted(unknown))}: only "
            "starttls=true|false and timeout=<seconds> are understood."
        )
    use_tls = parts.scheme == "smtps"
    start_tls = _flag("starttls", options["starttls"]) if "starttls" in options else None
    if use_tls and start_tls:
        raise errors.ConfigError(
            "TASKFLOW_SMTP_URL: smtps:// is TLS already; drop starttls=true (or use smtp://)."
        )
    timeout = DEFAULT_TIMEOUT
    if "timeout" in options:
        try:
            timeout = float(options["timeout"])
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= 600:
            raise errors.ConfigError("TASKFLOW_SMTP_URL: timeout must be 1 to 600 seconds.")
    return MailSettings(
        host=parts.hostname,
        port=port or (465 if use_tls else 587 if start_tls else 25),
        use_tls=use_tls,
        start_tls=False if use_tls else start_tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        timeout=timeout,
    )


def load(env: Mapping[str, str]) -> MailSettings | None:
    """The e-mail settings, or None when ``TASKFLOW_SMTP_URL`` is not set."""
    url = (env.get("TASKFLOW_SMTP_URL") or "").strip()
    if not url:
        return None
    server = parse_url(url)
    sender = _address("TASKFLOW_MAIL_FROM", env.get("TASKFLOW_MAIL_FROM") or DEFAULT_FROM)
    reply_to = env.get("TASKFLOW_MAIL_REPLY_TO") or None
    templates_text = env.get("TASKFLOW_MAIL_TEMPLATES") or None
    templates = Path(templates_text).resolve() if templates_text else None
    if templates is not None and not templates.is_dir():
        raise errors.ConfigError(
            f"TASKFLOW_MAIL_TEMPLATES={templates_text!r} is not a folder: point it at a folder "
            "of templates (docs/delivery.md), or unset it for the built-in ones."
        )
    return replace(
        server,
        sender=sender,
        reply_to=_address("TASKFLOW_MAIL_REPLY_TO", reply_to) if reply_to else None,
        templates=templates,
    )
