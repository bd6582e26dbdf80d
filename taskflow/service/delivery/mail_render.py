"""E-mail from a notification: Jinja templates (plain text and HTML) and the message itself.

Templates are looked up, first found wins, for a notification of kind ``K`` in
workflow ``W``: in the ``TASKFLOW_MAIL_TEMPLATES`` folder ``W/K.<part>.j2``,
``W/notification.<part>.j2``, ``K.<part>.j2``, ``notification.<part>.j2``; then the
same two names among the defaults shipped in ``service/delivery/mail_templates``. The parts
are ``subject`` (one line), ``txt`` (the plain text body) and ``html`` (the HTML
alternative, autoescaped). Templates run sandboxed and are compiled at start-up,
so a broken one fails fast, naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid, parseaddr
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import sandbox

from taskflow import errors
from taskflow.config.mail_config import MailSettings
from taskflow.core.access import addresses

DEFAULTS = Path(__file__).resolve().parent / "mail_templates"
PARTS = ("subject", "txt", "html")
_WORKFLOW_DIR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Letter:
    """What to send: the addressee and the three rendered parts."""

    to_email: str
    to_name: str | None
    subject: str
    text: str
    html: str


class Templates:
    """The template set for a process: the operator's folder over the built-in defaults."""

    def __init__(self, folder: Path | None) -> None:
        loaders: list[jinja2.BaseLoader] = []
        if folder is not None:
            loaders.append(jinja2.FileSystemLoader(str(folder)))
        # The defaults sit under a prefix, so a folder's own file of the same name wins.
        loaders.append(jinja2.PrefixLoader({"default": jinja2.FileSystemLoader(str(DEFAULTS))}))
        self.env = sandbox.SandboxedEnvironment(
            loader=jinja2.ChoiceLoader(loaders),
            autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",)),
            undefined=jinja2.ChainableUndefined,
            keep_trailing_newline=True,
        )
        self._check(folder)

    def _check(self, folder: Path | None) -> None:
        """Compile every template now: a syntax error stops start-up, naming the file."""
        names = list(self.env.list_templates(extensions=["j2"]))
        for name in names:
            try:
                self.env.get_template(name)
            except jinja2.TemplateSyntaxError as exc:
                where = (
                    folder / name
                    if folder is not None and not name.startswith("default/")
                    else name
                )
                why = str(exc.message).rstrip(".")
                raise errors.ConfigError(
                    f"Mail template {where}, line {exc.lineno}: {why}. Fix it "
                    "(docs/delivery.md lists the names and variables), or remove it to use "
                    "the built-in one."
                ) from None

    def _names(self, workflow: str, kind: str, part: str) -> list[str]:
        found = []
        if _WORKFLOW_DIR.match(workflow):
            found += [f"{workflow}/{kind}.{part}.j2", f"{workflow}/notification.{part}.j2"]
        found += [f"{kind}.{part}.j2", f"notification.{part}.j2"]
        found += [f"default/{kind}.{part}.j2", f"default/notification.{part}.j2"]
        return found

    def render(self, workflow: str, kind: str, part: str, values: dict[str, Any]) -> str:
        return self.env.select_template(self._names(workflow, kind, part)).render(values)


def letter(templates: Templates, workflow: str, kind: str, values: dict[str, Any]) -> Letter:
    """The three parts of a notification's e-mail."""
    subject = " ".join(templates.render(workflow, kind, "subject", values).split())
    return Letter(
        to_email=str(values["recipient_email"]),
        to_name=values.get("recipient_name"),
        subject=subject[:250] or str(values.get("message", ""))[:250],
        text=templates.render(workflow, kind, "txt", values),
        html=templates.render(workflow, kind, "html", values),
    )


def _header_safe(text: str | None) -> str:
    return " ".join((text or "").split())


def message(mail: MailSettings, found: Letter, now: datetime, notification_id: int) -> EmailMessage:
    """A plain transactional e-mail (no List-Unsubscribe): From, To, Reply-To, text and HTML."""
    msg = EmailMessage()
    msg["From"] = mail.sender
    # The domain in IDNA form: formataddr (and servers without SMTPUTF8) take ASCII only.
    msg["To"] = formataddr((_header_safe(found.to_name), addresses.ascii_form(found.to_email)))
    if mail.reply_to:
        msg["Reply-To"] = mail.reply_to
    msg["Subject"] = _header_safe(found.subject)
    msg["Date"] = format_datetime(now)
    domain = parseaddr(mail.sender)[1].rpartition("@")[2] or "localhost"
    msg["Message-ID"] = make_msgid(idstring=f"notification.{notification_id}", domain=domain)
    # Automatic mail: out-of-office responders must not answer it (RFC 3834).
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(found.text)
    msg.add_alternative(found.html, subtype="html")
    return msg
