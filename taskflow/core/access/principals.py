"""Principals: who people are to taskflow, and the checks on what defines them."""

from __future__ import annotations

import functools
import json
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.access import addresses
from taskflow.core.access import working_hours as wh
from taskflow.core.definition import audience as au

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,99}$")

#: The one global role: every power on every workflow, and managing principals.
ADMIN_ROLE = "admin"
#: Kept for readers of the old name; a role alone grants no power (see ``Grant``).
LEAD_ROLES = frozenset({"lead", "manager", ADMIN_ROLE})
INTEGRATION_ROLE = "integration"
#: Powers granted per workflow (and team) on the principal: ``powers`` entries.
LEAD, MANAGER, INTEGRATION = "lead", "manager", "integration"
#: The opt-in to act through agent tools (``taskflow mcp``): it grants no power of its own,
#: it lets the principal's existing powers be used by its agents' write tools.
AGENT = "agent"
POWERS = (LEAD, MANAGER, INTEGRATION, AGENT)
#: What a team key looks like: an audience key of a role, group, user or attribute.
TEAM_PATTERN = re.compile(r"^(role|group|user|attr):[A-Za-z0-9][A-Za-z0-9._:/+=@-]{0,199}$")


@dataclass(frozen=True)
class Grant:
    """One scoped power: ``power`` over ``workflows`` (None: all), for ``teams`` (None: all).

    ``teams`` are audience keys (``role:finance``): the grant then reaches only slots
    whose candidates include one of them (and the runs holding such slots).
    ``events`` (integrations only) are the events it may raise (None: all of the
    granted workflows' events).
    """

    power: str
    workflows: tuple[str, ...] | None = None
    teams: tuple[str, ...] | None = None
    events: tuple[str, ...] | None = None

    def describe(self) -> str:
        """In words, e.g. ``lead of expense-approval for group:emea``."""
        text = f"{self.power} of " + (", ".join(self.workflows) if self.workflows else "all")
        if self.teams is not None:
            text += " for " + ", ".join(self.teams)
        if self.events is not None:
            text += " raising " + ", ".join(self.events)
        return text

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape files, the database and the API use (absent parts left out)."""
        out: dict[str, Any] = {"power": self.power}
        for name in ("workflows", "teams", "events"):
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value)
        return out


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
    #: Scoped powers (lead, manager, integration); ``taskflow.core.access.access`` reads them.
    powers: tuple[Grant, ...] = ()
    #: Weekly windows or a named calendar (``setWorkingHours``); None: not set.
    working_hours: wh.WorkingHours | None = None
    #: Absences (``addLeave``), by start.
    leave: tuple[wh.Leave, ...] = ()
    #: The workspace (tenant) it belongs to and acts in (docs/workspaces.md); '' for one not
    #: stored yet: it is created in the workspace of whoever creates it.
    workspace: str = ""
    #: Its workspace is suspended: its tokens are refused (read with it).
    workspace_suspended: bool = False
    #: Its workspace's limit of requests per minute (None: none), read with it.
    workspace_requests_per_minute: int | None = None
    #: Its workspace has a live-run limit, an open-slot limit (checked where its requests
    #: start runs, open slots; none: no statement spent on it).
    workspace_runs_limited: bool = False
    workspace_slots_limited: bool = False

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
        """Admin, or holds a lead or manager grant *somewhere*: not where; ask ``core.access``."""
        return self.is_admin or any(g.power in (LEAD, MANAGER) for g in self.powers)

    @property
    def is_integration(self) -> bool:
        """Admin, or holds an integration grant *somewhere*: not where; ask ``core.access``."""
        return self.is_admin or any(g.power == INTEGRATION for g in self.powers)


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
    why = None if email is None else addresses.problem(email)
    if why is not None:
        # Mailed as is (To header, SMTP envelope): exactly one address, as an outsider's.
        raise errors.ValidationError(
            f"principal {principal_id!r}: email {email!r} is not an address like "
            f"name@example.com ({why}); give exactly one, with no name, list or line break.",
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
    powers = build_powers(data.get("powers"), principal_id)
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
        powers=powers,
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


def _grant_names(
    value: Any, what: str, principal_id: str, pattern: re.Pattern[str]
) -> tuple[str, ...]:
    names = _names(value, f"powers.{what}", principal_id)
    for name in names:
        if not pattern.match(name):
            raise errors.ValidationError(
                f"principal {principal_id!r}: powers.{what} entry {name!r} is not valid; "
                + (
                    "write an audience key such as role:finance or group:emea."
                    if what == "teams"
                    else "use a workflow or event name."
                ),
                field="powers",
            )
    if not names:
        raise errors.ValidationError(
            f"principal {principal_id!r}: powers.{what} is empty, which would grant nothing; "
            f"leave {what} out to mean all, or name at least one.",
            field="powers",
        )
    return names


def build_powers(value: Any, principal_id: str) -> tuple[Grant, ...]:
    """Check ``powers`` (a list of grants, or its JSON text from a CSV cell) and build them."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise errors.ValidationError(
                f"principal {principal_id!r}: powers must be a JSON list such as "
                '[{"power": "lead", "workflows": ["expense-approval"]}].',
                field="powers",
            ) from None
    if not isinstance(value, list | tuple):
        raise errors.ValidationError(
            f"principal {principal_id!r}: powers must be a list of grants.", field="powers"
        )
    grants: list[Grant] = []
    for entry in value:
        if not isinstance(entry, Mapping):
            raise errors.ValidationError(
                f"principal {principal_id!r}: each powers entry is an object with a power.",
                field="powers",
            )
        unknown = set(entry) - {"power", "workflows", "teams", "events"}
        if unknown:
            raise errors.ValidationError(
                f"principal {principal_id!r}: powers entry has unknown keys {sorted(unknown)}; "
                "use power, workflows, teams and (integration) events.",
                field="powers",
            )
        power = entry.get("power")
        if power not in POWERS:
            raise errors.ValidationError(
                f"principal {principal_id!r}: power {power!r} is unknown; use one of "
                f"{', '.join(POWERS)} (admin is a role, global by design).",
                field="powers",
            )

        def part(
            name: str, pattern: re.Pattern[str], entry: Mapping[str, Any] = entry
        ) -> tuple[str, ...] | None:
            raw = entry.get(name)
            return None if raw is None else _grant_names(raw, name, principal_id, pattern)

        events = part("events", NAME_PATTERN)
        if events is not None and power != INTEGRATION:
            raise errors.ValidationError(
                f"principal {principal_id!r}: only integration grants name events.",
                field="powers",
            )
        teams = part("teams", TEAM_PATTERN)
        if teams is not None and power == AGENT:
            raise errors.ValidationError(
                f"principal {principal_id!r}: agent grants are per workflow, not per team; "
                "leave teams out.",
                field="powers",
            )
        if teams is not None and power == INTEGRATION:
            raise errors.ValidationError(
                f"principal {principal_id!r}: integration grants are per workflow and event, "
                "not per team; leave teams out.",
                field="powers",
            )
        grants.append(
            Grant(
                power=str(power),
                workflows=part("workflows", NAME_PATTERN),
                teams=teams,
                events=events,
            )
        )
    return tuple(dict.fromkeys(grants))


def saved_or_taken(
    saved: tuple[Principal, bool, bool] | None, principal_id: str
) -> tuple[Principal, bool, bool]:
    """What an upsert stored, or the refusal of a login another workspace holds (nothing
    was written; the refusal rolls the transaction back)."""
    if saved is None:
        raise errors.ValidationError(
            f"The login {principal_id!r} is taken by a principal of another workspace: logins "
            'are unique across the deployment (docs/workspaces.md, "Logins"). Choose another, '
            "for example with your workspace's name in it.",
            field="login",
        )
    return saved
