"""E-mail settings: TASKFLOW_SMTP_URL and friends, read and refused with a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow import errors
from taskflow.config import mail_config


def test_no_url_means_no_mail() -> None:
    assert mail_config.load({}) is None
    assert mail_config.load({"TASKFLOW_MAIL_FROM": "a@b.example"}) is None


def test_smtp_with_starttls_and_auth() -> None:
    found = mail_config.load(
        {
            "TASKFLOW_SMTP_URL": "smtp://mailer%40acme:p%40ss@mail.acme.example:587?starttls=true",
            "TASKFLOW_MAIL_FROM": "Taskflow <taskflow@acme.example>",
            "TASKFLOW_MAIL_REPLY_TO": "help@acme.example",
        }
    )
    assert found is not None
    assert (found.host, found.port, found.use_tls, found.start_tls) == (
        "mail.acme.example",
        587,
        False,
        True,
    )
    assert (found.username, found.password) == ("mailer@acme", "p@ss")
    assert found.sender == "Taskflow <taskflow@acme.example>"
    assert found.reply_to == "help@acme.example"
    assert "p@ss" not in repr(found)  # the password never reaches a log line


def test_smtps_and_default_ports() -> None:
    smtps = mail_config.parse_url("smtps://u:p@mail.example")
    assert (smtps.port, smtps.use_tls, smtps.start_tls) == (465, True, False)
    plain = mail_config.parse_url("smtp://localhost:8025")
    assert (plain.port, plain.use_tls, plain.start_tls, plain.username) == (8025, False, None, None)
    assert mail_config.parse_url("smtp://localhost?starttls=true").port == 587
    assert mail_config.parse_url("smtp://localhost").port == 25
    assert mail_config.parse_url("smtp://localhost?timeout=5").timeout == 5.0


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"TASKFLOW_SMTP_URL": "http://mail.example"}, "smtp://"),
        ({"TASKFLOW_SMTP_URL": "smtp://mail.example:99999"}, "port"),
        ({"TASKFLOW_SMTP_URL": "smtp://mail.example?tls=1"}, "unknown option"),
        ({"TASKFLOW_SMTP_URL": "smtps://mail.example?starttls=true"}, "TLS already"),
        ({"TASKFLOW_SMTP_URL": "smtp://mail.example?starttls=maybe"}, "true or false"),
        ({"TASKFLOW_SMTP_URL": "smtp://m.example", "TASKFLOW_MAIL_FROM": "nobody"}, "address"),
        (
            {"TASKFLOW_SMTP_URL": "smtp://m.example", "TASKFLOW_MAIL_TEMPLATES": "/no/such"},
            "not a folder",
        ),
    ],
)
def test_bad_settings_are_refused_with_a_fix(env: dict[str, str], says: str) -> None:
    with pytest.raises(errors.ConfigError, match=says):
        mail_config.load(env)


def test_a_broken_template_fails_at_start_naming_the_file(tmp_path: Path) -> None:
    from taskflow.service.delivery import mail_render

    (tmp_path / "reminder.txt.j2").write_text("Hello {{ name\n")
    with pytest.raises(errors.ConfigError, match=r"reminder\.txt\.j2, line 1"):
        mail_render.Templates(tmp_path)
