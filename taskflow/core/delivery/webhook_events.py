"""The event catalog and what a webhook delivery sends: pure (docs/events.md, docs/delivery.md).

Events come from timeline lines: the ``outbox_rows`` trigger (``store/delivery/webhooks.sql``)
maps a line's kind to an event type with :data:`KIND_TO_TYPE` (a test keeps the two
equal) and copies the line with its run's workflow, version and subject key. This
module turns such a row into the versioned JSON body, decides when a failed attempt is
tried again, and which endpoint addresses are refused.
"""

from __future__ import annotations

import base64
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from taskflow import errors

#: The version of every event's JSON shape (``data.schemaVersion``); bumped on a breaking change.
SCHEMA_VERSION = 1

#: Timeline line kind -> event type.
KIND_TO_TYPE: Mapping[str, str] = {
    "run.started": "run.started",
    "run.transitioned": "run.state_changed",
    "run.completed": "run.ended",
    "run.cancelled": "run.ended",
    "slot.opened": "slot.opened",
    "slot.claimed": "slot.claimed",
    "slot.released": "slot.released",
    "slot.assigned": "slot.assigned",
    "slot.reassigned": "slot.assigned",
    "slot.satisfied": "slot.completed",
    "clock.at_risk": "clock.at_risk",
    "clock.forecast_at_risk": "clock.forecast_at_risk",
    "clock.breached": "clock.breached",
    "clock.met": "clock.met",
    "reminder.fired": "reminder.fired",
    "slot.escalated": "escalation.fired",
    "slot.candidate_added": "slot.candidate_added",
    "link.minted": "link.minted",
    "link.used": "link.used",
    "event.buffered": "event.buffered",
    "child.started": "run.child_started",
    "child.ended": "run.child_ended",
    "run.deadline_at_risk": "run.deadline_at_risk",
    "run.deadline_breached": "run.deadline_breached",
    "slot.expired": "slot.expired",
    "subject.gone": "subject.deleted",
    "run.compensating": "run.compensating",
    "run.compensated": "run.compensated",
    "run.compensation_failed": "run.compensated",
}

#: Every event type an endpoint may subscribe to, in catalog order.
EVENT_TYPES: tuple[str, ...] = tuple(dict.fromkeys(KIND_TO_TYPE.values()))


class DeliveryStatus(StrEnum):
    """Where a webhook delivery stands (``webhook_delivery.status``)."""

    #: Not delivered yet: due at its next try (or being sent).
    PENDING = "pending"
    #: The endpoint answered 2xx.
    DELIVERED = "delivered"
    #: Given up: a final answer, or still failing past the horizon.
    DEAD = "dead"
    #: Not sent: the endpoint's owner may no longer receive its workflow's events (its
    #: ``last_error`` says why: ``access.webhook_owner_refusal``). Final until replayed.
    SKIPPED = "skipped"


#: In the catalog, not emitted yet (none today: ``clock.at_risk`` comes from its timer).
PLANNED_TYPES: tuple[str, ...] = ()


@dataclass(frozen=True)
class Event:
    """An outbox row: one event as the trigger wrote it."""

    id: int
    type: str
    kind: str
    run_id: str
    slot_id: str | None
    slot_name: str | None
    workflow: str
    workflow_version: int
    subject_type: str
    subject_external_id: str
    actor: str | None
    reason: str | None
    details: Mapping[str, Any]
    occurred_at: datetime


@dataclass(frozen=True)
class EndpointChange:
    """What a change of a webhook endpoint sets; ``None``: that part stays as it is."""

    url: str | None = None
    description: str | None = None
    event_types: Sequence[str] | None = None
    workflows: Sequence[str] | None = None
    enabled: bool | None = None


def global_id(type_name: str, local_id: str) -> str:
    """The API's global id of an object (the same as ``node(id:)`` takes)."""
    return base64.urlsafe_b64encode(f"{type_name}:{local_id}".encode()).decode().rstrip("=")


def local_id(type_name: str, given: str) -> str:
    """``given`` as a local id: the uuid inside a global id of ``type_name``, else as given
    (automation documents may name an endpoint either way)."""
    try:
        decoded = base64.urlsafe_b64decode(given + "=" * (-len(given) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return given
    prefix = f"{type_name}:"
    return decoded.removeprefix(prefix) if decoded.startswith(prefix) else given


def message_id(event_id: int) -> str:
    """``webhook-id``: the same for every attempt and every replay of one event."""
    return f"evt_{event_id}"


#: The actor of what an outsider did through a magic link, as the outbox holds it: ``link:<id>``
#: (the trigger writes it, never the outsider's address: store/delivery/webhooks.sql).
LINK_ACTOR = "link:"


def actor_of(actor: str | None) -> str | None:
    """An event's actor as sent: a principal's id, or ``link:<MagicLink global id>``."""
    if actor is not None and actor.startswith(LINK_ACTOR):
        return LINK_ACTOR + global_id("MagicLink", actor.removeprefix(LINK_ACTOR))
    return actor


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


#: The event types whose added fields are details as text: (field, detail key) pairs.
_DETAIL_TEXTS: dict[str, tuple[tuple[str, str], ...]] = {
    "slot.released": (("previousHolder", "previous_holder"),),
    "slot.assigned": (("holder", "to"), ("previousHolder", "previous_holder")),
    "clock.at_risk": (("milestone", "milestone"), ("dueAt", "due_at"), ("atRiskAt", "at_risk_at")),
    "clock.breached": (("milestone", "milestone"), ("dueAt", "due_at")),
    "clock.met": (("milestone", "milestone"), ("dueAt", "due_at"), ("breachedAt", "breached")),
    "escalation.fired": (("added", "added"),),
    "slot.candidate_added": (("added", "added"),),
    "event.buffered": (("event", "event"), ("expiresAt", "expires_at")),
    "run.child_started": (("label", "label"), ("workflowName", "child_workflow")),
    "run.child_ended": (
        ("label", "label"),
        ("workflowName", "child_workflow"),
        ("state", "state"),
        ("status", "status"),
        ("failure", "failure"),
    ),
    "run.deadline_at_risk": (("dueAt", "due_at"), ("atRiskAt", "at_risk_at")),
    "run.deadline_breached": (("dueAt", "due_at"),),
    "slot.expired": (("expiresAt", "expires_at"), ("previousHolder", "holder")),
    "subject.deleted": (("state", "state"),),
    "run.compensating": (("label", "label"), ("workflowName", "compensation_workflow")),
    "run.compensated": (
        ("label", "label"),
        ("workflowName", "compensation_workflow"),
        ("failure", "failure"),
    ),
}


#: ``clock.forecast_at_risk``'s fields: (field, detail key), numbers as numbers.
_FORECAST = {
    "probability": "probability",
    "threshold": "threshold",
    "shareElapsed": "share_elapsed",
}


#: The timeline details an outbox row keeps: those a body reads, and nothing else (the
#: trigger in store/delivery/webhooks.sql lists the same; a unit test keeps them equal). What
#: people entered, audiences and link recipients' addresses stay on the timeline.
DETAIL_KEYS: frozenset[str] = frozenset(
    {key for pairs in _DETAIL_TEXTS.values() for _, key in pairs}
    | {"slot", "source", "target", "via", "state", "event", "reminder", "firing", "link"}
    | {"child_run", "step_run"}
    | {*_FORECAST.values(), "cohort"}
)


def _specific(e: Event) -> dict[str, Any]:
    """The fields one event type adds (docs/events.md lists them)."""
    d = e.details
    if e.type in _DETAIL_TEXTS:
        found: dict[str, Any] = {field: _text(d.get(key)) for field, key in _DETAIL_TEXTS[e.type]}
        if e.type.startswith(("run.child_", "run.compensat")):  # the other end of the link
            child = d.get("child_run")
            found["childRun"] = {"id": global_id("Run", str(child))} if child else None
        if e.type.startswith("run.compensat"):  # the step's run the compensation undoes
            step = d.get("step_run")
            found["stepRun"] = {"id": global_id("Run", str(step))} if step else None
        return found
    if e.type == "clock.forecast_at_risk":  # the forecast's figures (docs/forecast.md)
        found = {field: d.get(key) for field, key in _FORECAST.items()}
        return {**found, "dueAt": _text(d.get("due_at")), "cohort": _text(d.get("cohort"))}
    if e.type == "run.state_changed":
        return {"from": _text(d.get("source")), "to": _text(d.get("target")), "via": d.get("via")}
    if e.type == "run.ended":
        if e.kind == "run.completed":
            return {"outcome": "completed", "state": _text(d.get("state")), "reason": None}
        return {"outcome": "cancelled", "state": None, "reason": e.reason}
    if e.type == "slot.claimed":
        return {"holder": e.actor}
    if e.type == "slot.completed":
        return {"event": _text(d.get("event")), "by": actor_of(e.actor)}
    if e.type == "reminder.fired":
        return {"reminder": _text(d.get("reminder")), "firing": d.get("firing")}
    if e.type == "automation.webhook":  # posted by an automation's webhook action
        return {"automation": _text(d.get("automation")), "message": _text(d.get("message"))}
    if e.type in ("link.minted", "link.used"):
        link = d.get("link")
        found = {"linkId": global_id("MagicLink", str(link)) if link else None}
        if e.type == "link.minted":
            found["expiresAt"] = _text(d.get("expires_at"))
        return found
    return {}


def payload(e: Event) -> dict[str, Any]:
    """The JSON an endpoint receives for ``e`` (Standard Webhooks' type/timestamp/data)."""
    occurred = e.occurred_at.isoformat()
    data: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "eventId": message_id(e.id),
        "occurredAt": occurred,
        "workflow": {"name": e.workflow, "version": e.workflow_version},
        "run": {"id": global_id("Run", e.run_id)},
        "subject": {"type": e.subject_type, "externalId": e.subject_external_id},
        "slot": ({"id": global_id("Slot", e.slot_id), "name": e.slot_name} if e.slot_id else None),
        "actor": actor_of(e.actor),
    }
    data.update(_specific(e))
    return {"type": e.type, "timestamp": occurred, "data": data}


def body(e: Event) -> str:
    """The exact body sent (and signed): compact JSON, the same on every attempt."""
    return json.dumps(payload(e), separators=(",", ":"), sort_keys=True, ensure_ascii=False)


# -- retries -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """How failed attempts are tried again (``TASKFLOW_WEBHOOK_*`` settings)."""

    base: timedelta = timedelta(seconds=5)
    cap: timedelta = timedelta(hours=1)
    #: Past this age an event that still fails is ``dead``.
    horizon: timedelta = timedelta(days=3)


def retryable(status: int | None) -> bool:
    """Network errors (None), 5xx and 429 are tried again; other answers are final."""
    return status is None or status == 429 or status >= 500


def backoff(policy: RetryPolicy, attempts: int, jitter: float) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: exponential, capped, and spread by
    ``jitter`` in [0, 1) over its upper half (so workers retrying together drift apart)."""
    step = policy.base * (1 << min(max(attempts - 1, 0), 30))
    full = min(step, policy.cap)
    return full / 2 + full / 2 * min(max(jitter, 0.0), 1.0)


def retry_after(header: str | None, now: datetime) -> timedelta | None:
    """A ``Retry-After`` header as a wait: seconds, or an HTTP date; None if absent or bad."""
    if not header:
        return None
    text = header.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))


def next_attempt(
    policy: RetryPolicy,
    *,
    attempts: int,
    created_at: datetime,
    now: datetime,
    jitter: float,
    asked: timedelta | None = None,
) -> datetime | None:
    """When to try again after the ``attempts``-th failure, or None: past the horizon, dead.

    A receiver's ``Retry-After`` (``asked``) is honoured when it asks for longer than the
    backoff would wait."""
    wait = backoff(policy, attempts, jitter)
    if asked is not None:
        wait = max(wait, asked)
    when = now + wait
    if when - created_at > policy.horizon:
        return None
    return when


# -- where endpoints may point -------------------------------------------------------------------


def check_url(url: str) -> tuple[str, str]:
    """The scheme and host of an endpoint URL, or INVALID_INPUT saying what to write."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise errors.ValidationError(
            f"The endpoint URL {url!r} is no absolute http(s) URL: write e.g. "
            "https://example.com/hooks/taskflow.",
            field="url",
        )
    if parts.username or parts.password:
        raise errors.ValidationError(
            "The endpoint URL carries a user name or password: leave them out; deliveries are "
            "signed (webhook-signature) for the receiver to verify.",
            field="url",
        )
    return parts.scheme, parts.hostname


def plain_http_refused(url: str, addresses: list[str], *, allow_http: bool) -> bool:
    """Plain http goes to public addresses only with ``allow_http``; to addresses that are not
    public (allowed by TASKFLOW_WEBHOOK_ALLOW_PRIVATE) it never leaves the host or network."""
    if urlsplit(url.strip()).scheme != "http" or allow_http:
        return False
    return any(refused_address(a, allow_private=False) is None for a in addresses)


def refused_address(
    address: str, *, allow_private: bool, allow_loopback: bool = False
) -> str | None:
    """Why ``address`` may not receive deliveries (loopback, link-local, private...), or None;
    ``allow_private`` allows all of them, ``allow_loopback`` loopback ones."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_multicast or ip.is_unspecified:
        return "a multicast or unspecified address"
    if allow_private or (allow_loopback and ip.is_loopback):
        return None
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private or ip.is_reserved or not ip.is_global:
        return "a private or reserved address"
    return None
