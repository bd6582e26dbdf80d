"""The events of an SLA dry run (docs/sla.md, "SLA dry run"): read, checked and capped.

A dry run plays ``[{at, kind, ...}, ...]`` in order. Each event is read here into an
:class:`Event` before anything is played: an unknown kind, a missing field, a naive or
unordered instant is an ``INVALID_INPUT`` naming the event's index; a timeline beyond
the caps is a ``DRY_RUN_TOO_LONG`` refusal. Pure: no clock, no I/O.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from taskflow import errors
from taskflow.core.common import refusals

#: At most this many events in one dry run.
MAX_EVENTS: Final = 200
#: From the first event to the last, at most this long.
MAX_SPAN: Final = timedelta(days=366)
#: At most this many timer firings (a reminder repeating every minute for a year stops here).
MAX_FIRINGS: Final = 5000

#: Each kind and the fields it requires (beyond ``at`` and ``kind``).
KINDS: Final[Mapping[str, tuple[str, ...]]] = {
    "start": (),
    "claim": ("slot",),
    "release": ("slot",),
    "complete": ("slot",),
    "subject": ("attributes",),
    "move": ("name",),
    "goto": ("state",),
    "pause": (),
    "resume": (),
    "end": (),
}
#: The fields an event may carry.
FIELDS: Final = frozenset(
    {
        "at",
        "kind",
        "slot",
        "by",
        "roles",
        "groups",
        "payload",
        "attributes",
        "name",
        "state",
        "reason",
    }
)
#: Who acts when an event names nobody.
ANYONE: Final = "dry-run"


@dataclass(frozen=True)
class Event:
    """One happening of the timeline, at ``at``; the fields its ``kind`` reads."""

    index: int
    at: datetime
    kind: str
    #: The slot a claim, release or complete acts on (by name, in the current state).
    slot: str | None = None
    #: Who acts, and for a move's ``by`` rule their roles and groups.
    by: str = ANYONE
    roles: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    #: A complete's or a move's data; a subject event's changed attributes.
    payload: Mapping[str, Any] = field(default_factory=dict)
    attributes: Mapping[str, Any] = field(default_factory=dict)
    #: A move's name; a goto's target state; the reason on the timeline.
    name: str | None = None
    state: str | None = None
    reason: str = "dry run"

    @property
    def principal(self) -> Mapping[str, Any]:
        """Who acts, as the audience rules read a principal (id, roles and groups)."""
        return {"id": self.by, "roles": list(self.roles), "groups": list(self.groups)}


def too_long(limit: str, allowed: int, asked: int, what: str) -> refusals.DryRunTooLong:
    """The refusal of a timeline beyond the cap ``limit``: "A dry run {what}. Shorten..."."""
    return refusals.DryRunTooLong(
        f"A dry run {what}. Shorten the timeline.", limit=limit, allowed=allowed, asked=asked
    )


def _bad(index: int, message: str) -> errors.ValidationError:
    return errors.ValidationError(f"events[{index}]: {message}", field=f"events[{index}]")


def _instant(index: int, value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise _bad(index, f"at {value!r} is not an ISO 8601 instant") from None
    if not isinstance(value, datetime):
        raise _bad(index, "at is required: an ISO 8601 instant with its offset")
    if value.utcoffset() is None:
        raise _bad(index, f"at {value.isoformat()} has no offset; add one (Z or +01:00)")
    return value


def _text(index: int, raw: Mapping[str, Any], name: str) -> str | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise _bad(index, f"{name} must be a string")
    return value


def _mapping(index: int, raw: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _bad(index, f"{name} must be an object")
    return dict(value)


def _names(index: int, raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = raw.get(name) or ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise _bad(index, f"{name} must be a list of names")
    return tuple(str(v) for v in value)


def event(index: int, raw: Mapping[str, Any]) -> Event:
    """``raw`` (a JSON object) as the ``index``-th event, or ``INVALID_INPUT`` saying why."""
    if not isinstance(raw, Mapping):
        raise _bad(index, "each event is an object {at, kind, ...}")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise _bad(
            index, f"unknown field {unknown[0]!r}; the fields are {', '.join(sorted(FIELDS))}"
        )
    kind = str(raw.get("kind"))
    if kind not in KINDS:
        raise _bad(index, f"kind {raw.get('kind')!r} is not one of {', '.join(KINDS)}")
    missing = [f for f in KINDS[kind] if raw.get(f) is None]
    if missing:
        raise _bad(index, f"a {kind} event needs {', '.join(missing)}")
    roles, groups = _names(index, raw, "roles"), _names(index, raw, "groups")
    return Event(
        index,
        _instant(index, raw.get("at")),
        kind,
        slot=_text(index, raw, "slot"),
        by=_text(index, raw, "by") or ANYONE,
        roles=roles,
        groups=groups,
        payload=_mapping(index, raw, "payload"),
        attributes=_mapping(index, raw, "attributes"),
        name=_text(index, raw, "name"),
        state=_text(index, raw, "state"),
        reason=_text(index, raw, "reason") or "dry run",
    )


def timeline(raw: Sequence[Mapping[str, Any]]) -> list[Event]:
    """The events, checked: within the caps, the first a ``start``, instants in order."""
    if len(raw) > MAX_EVENTS:
        what = f"plays at most {MAX_EVENTS} events; this one has {len(raw)}"
        raise too_long("events", MAX_EVENTS, len(raw), what)
    events = [event(i, e) for i, e in enumerate(raw)]
    if not events or events[0].kind != "start":
        raise errors.ValidationError(
            "events[0] must be the start: {at, kind: 'start'} (the run starts then).",
            field="events[0]",
        )
    for before, after in itertools.pairwise(events):
        if after.at < before.at:
            raise _bad(after.index, f"at {after.at.isoformat()} is before the event before it")
    span = events[-1].at - events[0].at
    if span > MAX_SPAN:
        what = f"spans at most {MAX_SPAN.days} days; this one spans {span.days}"
        raise too_long("span_days", MAX_SPAN.days, span.days, what)
    return events


def check_firings(fired: int) -> None:
    """Refuse a timeline that has fired more than :data:`MAX_FIRINGS` timers."""
    if fired > MAX_FIRINGS:
        raise too_long(
            "firings",
            MAX_FIRINGS,
            fired,
            f"fires at most {MAX_FIRINGS} timers; this timeline fires more "
            "(a reminder repeating often?)",
        )
