"""Principals: who people are to taskflow, and the checks on what defines them."""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.definition import audience as au

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,99}$")
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

#: Roles that grant powers beyond candidacy.
ADMIN_ROLE = "admin"
#: Team leads and managers: read every live slot (work, board, runs), cancel runs.
LEAD_ROLES = frozenset({"lead", "manager", ADMIN_ROLE})
#: Applications acting through the API: start runs, update subjects, raise any event.
INTEGRATION_ROLE = "integration"


@dataclass(frozen=True)
class Principal:
    """A user (or system account) known to taskflow."""

    id: str
    display_name: str
    email: str | None = None
    roles: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_zone: str = "UTC"
    calendar: str | None = None
    active: bool = True
    #: Staff tokens issued before this instant are refused (deactivation, sign out everywhere).
    tokens_valid_after: datetime | None = None

    @functools.cached_property
    def audience_keys(self) -> frozenset[str]:
        """The audience keys it carries (``audience.principal_keys``), worked out once."""
        return au.principal_keys(self)

    @property
    def is_admin(self) -> bool:
        return ADMIN_ROLE in self.roles

    def has_any_role(self, *roles: str) -> bool:
        return any(role in self.roles for role in roles)

    @property
    def is_lead(self) -> bool:
        """Leads, managers and admins see all work, not only their own."""
        return any(role in LEAD_ROLES for role in self.roles)

    @property
    def is_integration(self) -> bool:
        """Applications (and admins) that feed runs: start, update subjects, raise events."""
        return self.has_any_role(INTEGRATION_ROLE, ADMIN_ROLE)


def _names(value: Any, what: str, principal_id: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in re.split(r"[;|,]", value) if part.strip()]
    if not isinstance(value, list | tuple):
        raise errors.ValidationError(
            f"principal {principal_id!r}: {what} must be a list of names, got {value!r}.",
            field=what,
        )
    names = tuple(dict.fromkeys(str(v).strip() for v in value))
    for name in names:
        if not NAME_PATTERN.match(name):
            raise errors.ValidationError(
                f"principal {principal_id!r}: {what} entry {name!r} is not a valid name; use "
                "letters, digits and . _ : / + - (up to 100 characters).",
                field=what,
            )
    return names


def build(data: Mapping[str, Any]) -> Principal:
    """Check a principal's fields (from the API, JSON or CSV) and build it.

    Raises :class:`taskflow.errors.ValidationError` naming the field and the fix.
    """
    principal_id = str(data.get("id") or "").strip()
    if not ID_PATTERN.match(principal_id):
        raise errors.ValidationError(
            f"principal id {principal_id!r} is not valid: use 1-200 characters, starting with "
            "a letter or digit, then letters, digits or . _ @ + -.",
            field="id",
        )
    display_name = str(data.get("display_name") or data.get("displayName") or "").strip()
    if not display_name or len(display_name) > 200:
        raise errors.ValidationError(
            f"principal {principal_id!r}: display name must be 1-200 characters.",
            field="displayName",
        )
    email = data.get("email") or None
    if email is not None and not EMAIL_PATTERN.match(str(email)):
        raise errors.ValidationError(
            f"principal {principal_id!r}: email {email!r} is not an address like name@example.com.",
            field="email",
        )
    time_zone = str(data.get("time_zone") or data.get("timeZone") or "UTC")
    try:
        zoneinfo.ZoneInfo(time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise errors.ValidationError(
            f"principal {principal_id!r}: time zone {time_zone!r} is unknown; use an IANA name "
            "such as Europe/London.",
            field="timeZone",
        ) from None
    attributes = data.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise errors.ValidationError(
            f"principal {principal_id!r}: attributes must be a JSON object.", field="attributes"
        )
    active = requested_active(data)
    return Principal(
        id=principal_id,
        display_name=display_name,
        email=str(email) if email else None,
        roles=_names(data.get("roles") or [], "roles", principal_id),
        groups=_names(data.get("groups") or [], "groups", principal_id),
        attributes=dict(attributes),
        time_zone=time_zone,
        calendar=(str(data["calendar"]) if data.get("calendar") else None),
        active=True if active is None else active,
    )


def requested_active(data: Mapping[str, Any]) -> bool | None:
    """The ``active`` an update asks for; None when it leaves it out (keep what is stored).

    A CSV cell left empty counts as left out; re-activating someone takes an explicit
    true (``true``, ``1``, ``yes``).
    """
    value = data.get("active")
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in ("true", "1", "yes", "y"):
            return True
        if text in ("false", "0", "no", "n"):
            return False
        raise errors.ValidationError(
            f"principal {data.get('id')!r}: active {value!r} is not true or false.",
            field="active",
        )
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise errors.ValidationError(
        f"principal {data.get('id')!r}: active must be true or false, got {value!r}.",
        field="active",
    )
