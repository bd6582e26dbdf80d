from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from itsdangerous import URLSafeSerializer

from taskflow import errors
from taskflow.service.access import tokens

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_a_minted_token_names_its_principal() -> None:
    signer = tokens.StaffTokens(["new-key"])
    assert signer.verify(signer.mint("ada", NOW), NOW) == "ada"


def test_an_expired_token_is_refused_with_its_expiry() -> None:
    signer = tokens.StaffTokens(["k"])
    token = signer.mint("ada", NOW, timedelta(hours=1))
    assert signer.verify(token, NOW + timedelta(minutes=59)) == "ada"
    with pytest.raises(errors.AuthenticationError, match="expired at 2026-12-01T10:00:00"):
        signer.verify(token, NOW + timedelta(hours=1))


@pytest.mark.parametrize("mangle", [lambda t: t[:-2], lambda t: t + "x", lambda t: "A" + t[1:]])
def test_a_tampered_token_is_refused(mangle: object) -> None:
    signer = tokens.StaffTokens(["k"])
    token = signer.mint("ada", NOW)
    with pytest.raises(errors.AuthenticationError, match="not valid"):
        signer.verify(mangle(token), NOW)  # type: ignore[operator]


def test_rotation_newest_signs_and_listed_keys_verify() -> None:
    old = tokens.StaffTokens(["old"])
    rotated = tokens.StaffTokens(["new", "old"])
    old_token = old.mint("ada", NOW)
    assert rotated.verify(old_token, NOW) == "ada"
    # The newest key signs: a server that only knows "new" accepts new tokens.
    assert tokens.StaffTokens(["new"]).verify(rotated.mint("ada", NOW), NOW) == "ada"
    # Retiring "old" retires the tokens it signed.
    with pytest.raises(errors.AuthenticationError, match="retired"):
        tokens.StaffTokens(["new"]).verify(old_token, NOW)


def test_a_token_signed_for_another_purpose_is_refused() -> None:
    other = URLSafeSerializer("k", salt="taskflow.magic-link.v1").dumps(
        {"sub": "ada", "exp": 2**40}
    )
    with pytest.raises(errors.AuthenticationError):
        tokens.StaffTokens(["k"]).verify(other, NOW)


@pytest.mark.parametrize(("text", "seconds"), [("90m", 5400), ("8h", 28800), ("30d", 2592000)])
def test_ttl_parsing(text: str, seconds: int) -> None:
    assert tokens.parse_ttl(text) == timedelta(seconds=seconds)


def test_ttl_parsing_says_what_to_write() -> None:
    with pytest.raises(errors.ValidationError, match=r"e\.g\. 90m, 8h, 30d"):
        tokens.parse_ttl("soon")
