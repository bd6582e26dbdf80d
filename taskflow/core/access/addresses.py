"""Exactly one e-mail address: what taskflow accepts as an address it mails to.

Pure. An address taken from a subject attribute (``who.email(subject.contact_email)``)
or a principal's ``email`` is put in a message's ``To`` header and the SMTP envelope;
text with CR/LF, a comma list or a display name (``A <a@x.com>``) would reach several
people or inject headers. :func:`problem` accepts one RFC 5322 addr-spec with an IDNA
domain (``user@bücher.example``) and nothing else: no display name, an ASCII local
part, not quoted, no ``[ip]`` domain, no whitespace. ``email-validator`` checks the syntax; its
deliverability check (DNS) is never used.

``core.recipients.check_subject`` applies it to the subject attributes a definition
reads outsiders' addresses from (docs/magic-links.md, docs/security.md).
"""

from __future__ import annotations

import email_validator

from taskflow import errors


def _validated(address: str) -> email_validator.ValidatedEmail:
    return email_validator.validate_email(
        address,
        check_deliverability=False,
        # RFC 5322's addr-spec is ASCII: only the domain may be international (IDNA).
        allow_smtputf8=False,
        allow_display_name=False,
        allow_quoted_local=False,
        allow_domain_literal=False,
    )


def problem(address: object) -> str | None:
    """Why ``address`` is not exactly one e-mail address (in words), or None if it is."""
    if not isinstance(address, str):
        return f"it is {type(address).__name__}, not text"
    try:
        _validated(address)
    except email_validator.EmailNotValidError as exc:
        return str(exc)
    return None


def check(address: object, field: str) -> str:
    """``address`` if it is exactly one e-mail address; INVALID_INPUT naming ``field`` if not."""
    why = problem(address)
    if why is not None:
        raise errors.ValidationError(
            f"{field} {address!r} is not an e-mail address ({why}): write exactly one "
            "address such as name@example.com, with no name, list or line break.",
            field=field,
        )
    assert isinstance(address, str)
    return address


def ascii_form(address: str) -> str:
    """A valid address with its domain in IDNA form (``user@xn--bcher-kva.example``), for
    SMTP servers without SMTPUTF8; ValueError if it is no valid address."""
    try:
        found = _validated(address)
    except email_validator.EmailNotValidError as exc:
        raise ValueError(str(exc)) from None
    assert found.ascii_email is not None  # allow_smtputf8=False: the local part is ASCII
    return found.ascii_email
