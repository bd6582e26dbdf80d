"""Magic links, the pure part: a link's status, the abuse throttle, form text to a payload.

A magic link lets someone without an account complete exactly one slot once
(see docs/magic-links.md). Everything here is a function of its arguments and
``now``: the shell reads rows, asks these functions, and writes what they say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskflow.core.common import refusals
from taskflow.core.definition import fields as fl

#: Link statuses, as staff see them.
ACTIVE, USED, REVOKED, EXPIRED = "active", "used", "revoked", "expired"


@dataclass(frozen=True)
class LinkView:
    """A magic link as stored (never the token: only its nonce's hash is kept)."""

    id: str
    run_id: str
    slot_id: str
    event: str
    recipient_name: str | None
    recipient_email: str
    created_by: str
    created_at: datetime
    expires_at: datetime
    consumed_at: datetime | None = None
    revoked_at: datetime | None = None
    revoked_by: str | None = None
    #: Form submissions seen; GET requests are never counted (mail scanners prefetch).
    opens: int = 0
    opened_at: datetime | None = None

    @property
    def recipient_key(self) -> str:
        """The audience key of the recipient, also the actor of what the link does."""
        return f"email:{self.recipient_email.lower()}"


def status(link: LinkView, now: datetime) -> str:
    """``used``, ``revoked``, ``expired`` or ``active``, in that order of precedence."""
    if link.consumed_at is not None:
        return USED
    if link.revoked_at is not None:
        return REVOKED
    if link.expires_at <= now:
        return EXPIRED
    return ACTIVE


# -- throttle ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How refused link requests from one client are slowed, then refused.

    Up to ``free`` refusals in a ``window`` cost nothing (people mistype, mail
    clients mangle links). Each refusal after that makes the client wait,
    doubling from ``first_wait`` up to ``max_wait``: slowed. From ``block_after``
    refusals the client is refused until the window ends: refused.
    """

    free: int = 5
    block_after: int = 20
    window: timedelta = timedelta(minutes=15)
    first_wait: timedelta = timedelta(seconds=1)
    max_wait: timedelta = timedelta(seconds=60)


@dataclass(frozen=True)
class Throttle:
    """One client's refused requests in the current window."""

    window_start: datetime
    failures: int
    blocked_until: datetime | None


def wait_left(state: Throttle | None, now: datetime) -> timedelta | None:
    """How long the client must wait before trying again; None when it may try now."""
    if state is None or state.blocked_until is None or state.blocked_until <= now:
        return None
    return state.blocked_until - now


def after_refusal(state: Throttle | None, now: datetime, limits: Limits) -> Throttle:
    """The client's state after one more refused request at ``now``."""
    if state is None or state.window_start + limits.window <= now:
        state = Throttle(window_start=now, failures=0, blocked_until=None)
    failures = state.failures + 1
    blocked_until = state.blocked_until
    if failures >= limits.block_after:
        blocked_until = state.window_start + limits.window
    elif failures > limits.free:
        wait = min(limits.first_wait * 2 ** (failures - limits.free - 1), limits.max_wait)
        blocked_until = now + wait
    return Throttle(state.window_start, failures, blocked_until)


# -- forms ---------------------------------------------------------------------------------------


def payload_from_form(fields: Sequence[fl.Field], form: Mapping[str, Any]) -> dict[str, Any]:
    """The payload an HTML form carries: declared fields only, empty text left out.

    Keys the page adds itself (the page nonce) are not fields; anything else
    undeclared is kept so validation names it rather than dropping it silently.
    """
    declared = {f.name for f in fields}
    return {
        name: value
        for name, value in form.items()
        if (name in declared and (not isinstance(value, str) or value.strip()))
        or (name not in declared and name[:1] != "_")
    }


def form_problems(error: fl.PayloadError) -> dict[str, str]:
    """Field name -> why it was refused, for errors shown next to each field."""
    found: dict[str, str] = {}
    for problem in error.problems:
        found.setdefault(problem.field, problem.reason)
    return found


# -- refusals ------------------------------------------------------------------------------------


# Defined with every other refusal; named here for this module's callers.
LinkUnusable = refusals.LinkUnusable
RecipientNotAllowed = refusals.RecipientNotAllowed
LinksNotAllowed = refusals.LinksNotAllowed
LinkNotRequested = refusals.LinkNotRequested
Throttled = refusals.Throttled
