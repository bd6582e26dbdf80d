"""An idempotency key's stored refusal names its class by module path; one stored before
the rooms move (issue 30) still comes back as the same class, not a bare error."""

from __future__ import annotations

from taskflow.core.common import refusals
from taskflow.service.common import idempotency


def test_a_refusal_stored_under_its_old_module_is_the_same_class() -> None:
    stored = {
        "class": "taskflow.core.refusals:StaleVersion",
        "code": "STALE_VERSION",
        "message": "The slot changed since you read it: read it again.",
        "facts": {},
    }
    error = idempotency._refusal_of(stored)
    assert type(error) is refusals.StaleVersion
    assert error.message == stored["message"]


def test_a_refusal_stored_under_its_new_module_is_the_same_class() -> None:
    stored = {
        "class": f"{refusals.__name__}:StaleVersion",
        "code": "STALE_VERSION",
        "message": "m",
        "facts": {},
    }
    assert type(idempotency._refusal_of(stored)) is refusals.StaleVersion
