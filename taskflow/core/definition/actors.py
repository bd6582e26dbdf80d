"""Who acted: the value hooks, routes' conditions and actions read as ``ctx.actor`` / ``actor``.

Every happening on a run has an actor. The timeline records a principal's login, a magic
link's recipient (``email:<address>``), or null when taskflow itself acted; a definition
reads the same happening as an :class:`Actor`, which also names taskflow's own acts:
``system`` (a subject update, an automatic start), ``timer`` (a timeout or escalation) or
``automation:<step id>`` (an automatic step's outcome).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

#: The kinds of actor, by how they acted.
PRINCIPAL: Final = "principal"
SYSTEM: Final = "system"
TIMER: Final = "timer"
LINK: Final = "link"
AUTOMATION: Final = "automation"

#: The audience-key prefix of a role (``role:finance``), as principals' keys carry it.
_ROLE_KEY: Final = "role:"


@dataclass(frozen=True)
class Actor:
    """Who acted: ``name`` is ``alice``, ``system``, ``timer``, ``email:<address>`` (a magic
    link's recipient) or ``automation:<step id>``; ``roles`` a principal's roles."""

    name: str
    roles: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """``principal``, ``system``, ``timer``, ``link`` or ``automation``."""
        if self.name in (SYSTEM, TIMER):
            return self.name
        if self.name.startswith(("email:", "link:")):
            return LINK
        if self.name.startswith(AUTOMATION + ":"):
            return AUTOMATION
        return PRINCIPAL

    @property
    def login(self) -> str | None:
        """The principal's login; None when taskflow itself or a link acted."""
        return self.name if self.kind == PRINCIPAL else None

    @property
    def recorded(self) -> str | None:
        """What the timeline records for this actor (null for taskflow's own acts)."""
        return self.name if self.kind in (PRINCIPAL, LINK) else None

    def as_value(self) -> dict[str, Any]:
        """The actor as conditions read it: ``actor.login``, ``actor.roles``, ``actor.kind``,
        ``actor.name``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "login": self.login,
            "roles": list(self.roles),
        }

    def __str__(self) -> str:
        return self.name


SYSTEM_ACTOR: Final = Actor(SYSTEM)
TIMER_ACTOR: Final = Actor(TIMER)

#: What an engine verb accepts as its actor: an :class:`Actor`, a timeline value, or None.
Acting = Actor | str | None


def of(acting: Acting, *, default: Actor = SYSTEM_ACTOR) -> Actor:
    """The :class:`Actor` of a timeline value (None: ``default``, taskflow itself)."""
    if isinstance(acting, Actor):
        return acting
    return default if acting is None else Actor(acting)


def with_keys(name: str, keys: Iterable[str]) -> Actor:
    """A principal's actor from its audience keys (its roles are its ``role:`` keys)."""
    return Actor(name, tuple(sorted(k[len(_ROLE_KEY) :] for k in keys if k.startswith(_ROLE_KEY))))


def principal(found: Any) -> Actor:
    """The actor of a principal (a mapping or an object with ``id`` and ``roles``)."""
    if isinstance(found, Mapping):
        return Actor(str(found.get("id")), tuple(found.get("roles") or ()))
    return Actor(str(found.id), tuple(getattr(found, "roles", ()) or ()))


def automation(step_id: object) -> Actor:
    """An automatic step's actor: ``automation:<step id>``."""
    return Actor(f"{AUTOMATION}:{step_id}")
