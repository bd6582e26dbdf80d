from __future__ import annotations

import pytest

from taskflow import errors
from taskflow.core.access import principals


def test_build_normalises_lists_and_defaults() -> None:
    p = principals.build(
        {"id": "ada", "display_name": "Ada", "roles": "admin; lead", "active": "yes"}
    )
    assert p.roles == ("admin", "lead")
    assert p.time_zone == "UTC"
    assert p.active is True
    assert p.is_admin


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"id": "", "display_name": "x"}, "principal id '' is not valid"),
        ({"id": "a b", "display_name": "x"}, "is not valid"),
        ({"id": "ada"}, "display name must be 1-200 characters"),
        ({"id": "ada", "display_name": "A", "email": "nope"}, "not an address"),
        ({"id": "ada", "display_name": "A", "time_zone": "Mars/Olympus"}, "IANA name"),
        ({"id": "ada", "display_name": "A", "roles": ["fine", "not fine"]}, "is not a valid name"),
        ({"id": "ada", "display_name": "A", "attributes": [1]}, "must be a JSON object"),
    ],
)
def test_bad_principals_are_refused_with_the_fix(data: dict[str, object], message: str) -> None:
    with pytest.raises(errors.ValidationError, match=message):
        principals.build(data)
