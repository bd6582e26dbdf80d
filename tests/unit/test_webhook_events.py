"""The event catalog, the delivery body, backoff and the address policy (pure)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from taskflow import errors
from taskflow.core.delivery import webhook_events as ev
from taskflow.store.common import sql

T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)


def test_the_trigger_keeps_exactly_the_details_bodies_read() -> None:
    function = sql.statements("delivery/webhooks")["outbox_function"]
    listed = re.search(r"WHERE d.key IN \(([^)]*)\)", function)
    assert listed is not None
    assert set(re.findall(r"'([a-z_]+)'", listed.group(1))) == ev.DETAIL_KEYS


def test_the_trigger_maps_exactly_the_catalog_kinds() -> None:
    function = sql.statements("delivery/webhooks")["outbox_function"]
    pairs = dict(re.findall(r"WHEN '([a-z_.]+)' THEN '([a-z_.]+)'", function))
    assert pairs == dict(ev.KIND_TO_TYPE)
    assert set(ev.EVENT_TYPES) | set(ev.PLANNED_TYPES) == {
        "run.started",
        "run.state_changed",
        "run.ended",
        "slot.opened",
        "slot.claimed",
        "slot.released",
        "slot.assigned",
        "slot.completed",
        "clock.at_risk",
        "clock.forecast_at_risk",
        "clock.breached",
        "clock.met",
        "reminder.fired",
        "escalation.fired",
        "link.minted",
        "link.used",
        "event.buffered",
        "run.child_started",
        "run.child_ended",
        "run.deadline_at_risk",
        "run.deadline_breached",
        "slot.expired",
        "subject.deleted",
        "run.compensating",
        "run.compensated",
        "slot.candidate_added",
    }


def _event(**changes: object) -> ev.Event:
    base: dict[str, object] = {
        "id": 7,
        "type": "link.minted",
        "kind": "link.minted",
        "run_id": "3f1c0d3e-2b8a-4a8e-9a57-6f1e5b7c9d10",
        "slot_id": "9b2f6c1a-7d3e-4f5a-8b9c-0d1e2f3a4b5c",
        "slot_name": "approve",
        "workflow": "vendor-onboarding",
        "workflow_version": 2,
        "subject_type": "vendor",
        "subject_external_id": "V-1",
        "actor": "olga",
        "reason": "link for x@example.com",
        "details": {
            "link": "5a0c8a8e-1f0e-4d52-9d64-1c2b3a4d5e6f",
            "recipient": "x@example.com",
            "expires_at": "2026-12-08T10:00:00+00:00",
        },
        "occurred_at": T0,
    }
    base.update(changes)
    return ev.Event(**base)  # type: ignore[arg-type]


def test_a_body_is_stable_shares_ids_as_global_ids_and_never_the_recipient_or_reason() -> None:
    e = _event()
    assert ev.body(e) == ev.body(e)
    data = json.loads(ev.body(e))
    assert data["type"] == "link.minted"
    assert data["data"]["eventId"] == "evt_7"
    assert data["data"]["run"]["id"] == ev.global_id("Run", e.run_id)
    assert data["data"]["linkId"] == ev.global_id("MagicLink", str(e.details["link"]))
    assert "x@example.com" not in ev.body(e)


@pytest.mark.parametrize(
    ("type_", "details", "added"),
    [
        ("slot.released", {"previous_holder": "bob"}, {"previousHolder": "bob"}),
        (
            "slot.assigned",
            {"to": "carl", "previous_holder": None},
            {"holder": "carl", "previousHolder": None},
        ),
        (
            "clock.at_risk",
            {"milestone": "finished", "due_at": "D", "at_risk_at": "R"},
            {"milestone": "finished", "dueAt": "D", "atRiskAt": "R"},
        ),
        (
            "clock.forecast_at_risk",
            {"due_at": "D", "probability": 0.8, "threshold": 0.7, "cohort": "all"}
            | {"share_elapsed": 0.4, "samples": 10},
            {"probability": 0.8, "threshold": 0.7, "shareElapsed": 0.4}
            | {"dueAt": "D", "cohort": "all"},
        ),
        (
            "clock.breached",
            {"milestone": "assigned", "due_at": "D"},
            {"milestone": "assigned", "dueAt": "D"},
        ),
        (
            "clock.met",
            {"milestone": "finished", "due_at": "D", "breached": None},
            {"milestone": "finished", "dueAt": "D", "breachedAt": None},
        ),
        ("escalation.fired", {"added": 3}, {"added": "3"}),
        (
            "event.buffered",
            {"event": "scan", "expires_at": "E"},
            {"event": "scan", "expiresAt": "E"},
        ),
    ],
)
def test_each_event_type_adds_its_details_as_text(
    type_: str, details: dict[str, object], added: dict[str, object]
) -> None:
    data = ev.payload(_event(type=type_, kind=type_, details=details))["data"]
    assert {key: data.get(key, "absent") for key in added} == added
    assert list(data)[-len(added) :] == list(added)


def test_backoff_doubles_up_to_its_cap_and_jitter_spreads_the_upper_half() -> None:
    policy = ev.RetryPolicy(base=timedelta(seconds=5), cap=timedelta(seconds=60))
    assert [ev.backoff(policy, n, 1.0).total_seconds() for n in range(1, 7)] == [
        5,
        10,
        20,
        40,
        60,
        60,
    ]
    assert ev.backoff(policy, 1, 0.0) == timedelta(seconds=2.5)


def test_retry_after_is_honoured_when_longer_and_the_horizon_makes_it_dead() -> None:
    policy = ev.RetryPolicy(horizon=timedelta(minutes=10))
    asked = ev.retry_after("120", T0)
    assert asked == timedelta(seconds=120)
    when = ev.next_attempt(policy, attempts=1, created_at=T0, now=T0, jitter=0.5, asked=asked)
    assert when == T0 + timedelta(seconds=120)
    date = ev.retry_after("Tue, 01 Dec 2026 10:05:00 GMT", T0)
    assert date == timedelta(minutes=5)
    assert ev.retry_after("soon", T0) is None
    late = T0 + timedelta(minutes=9, seconds=59)
    assert ev.next_attempt(policy, attempts=9, created_at=T0, now=late, jitter=0.0) is None
    assert ev.retryable(None)
    assert ev.retryable(429)
    assert ev.retryable(503)
    assert not ev.retryable(410)


@pytest.mark.parametrize(
    ("address", "strict", "loose"),
    [
        ("8.8.8.8", None, None),
        ("127.0.0.1", "a loopback address", None),
        ("::1", "a loopback address", None),
        ("::ffff:127.0.0.1", "a loopback address", None),
        ("169.254.169.254", "a link-local address", None),
        ("fe80::1", "a link-local address", None),
        ("10.0.0.1", "a private or reserved address", None),
        ("fd00::1", "a private or reserved address", None),
        ("100.64.0.1", "a private or reserved address", None),
        ("0.0.0.0", "a multicast or unspecified address", "a multicast or unspecified address"),
        ("224.0.0.1", "a multicast or unspecified address", "a multicast or unspecified address"),
    ],
)
def test_addresses_refused_unless_private_ones_are_allowed(
    address: str, strict: str | None, loose: str | None
) -> None:
    assert ev.refused_address(address, allow_private=False) == strict
    assert ev.refused_address(address, allow_private=True) == loose


def test_urls_are_absolute_http_s_without_credentials_plain_http_stays_inside() -> None:
    assert ev.check_url("https://hooks.example.com/x") == ("https", "hooks.example.com")
    for bad in ("hooks.example.com", "ftp://h.example/", "https://u:p@h.example/"):
        with pytest.raises(errors.ValidationError):
            ev.check_url(bad)
    public, inside = ["93.184.215.14"], ["127.0.0.1"]
    assert ev.plain_http_refused("http://h.example/", public, allow_http=False)
    assert not ev.plain_http_refused("http://h.example/", public, allow_http=True)
    assert not ev.plain_http_refused("http://127.0.0.1:9/", inside, allow_http=False)
    assert not ev.plain_http_refused("https://h.example/", public, allow_http=False)


def test_loopback_endpoints_are_allowed_in_dev_only_unless_configured() -> None:
    from taskflow.config import config

    base = {
        "TASKFLOW_DATABASE_URL": "postgresql://x/",
        "TASKFLOW_SECRET_KEYS": "k" * 40,
    }
    dev = config.load({**base, "TASKFLOW_ENV": "dev"}).webhooks
    prod = config.load({**base, "TASKFLOW_ENV": "prod"}).webhooks
    assert (dev.allow_loopback, dev.allow_private) == (True, False)
    assert (prod.allow_loopback, prod.allow_private) == (False, False)
    opened = config.load({**base, "TASKFLOW_ENV": "prod", "TASKFLOW_WEBHOOK_ALLOW_PRIVATE": "1"})
    assert opened.webhooks.allow_loopback
    assert ev.refused_address("127.0.0.1", allow_private=False, allow_loopback=True) is None
    assert ev.refused_address("10.0.0.1", allow_private=False, allow_loopback=True)
    with pytest.raises(errors.ConfigError):
        config.load({**base, "TASKFLOW_WEBHOOK_HORIZON": "soon"})


def test_an_expired_slot_and_a_deleted_subject_say_what_they_carry() -> None:
    expired = _event(
        type="slot.expired",
        kind="slot.expired",
        details={"slot": "sign", "expires_at": "2026-12-04T09:00:00+00:00", "holder": "fiona"},
        actor=None,
    )
    data = ev.payload(expired)["data"]
    assert (data["expiresAt"], data["previousHolder"]) == ("2026-12-04T09:00:00+00:00", "fiona")
    gone = _event(
        type="subject.deleted", kind="subject.gone", details={"state": "signing"}, slot_id=None
    )
    assert ev.payload(gone)["data"]["state"] == "signing"
