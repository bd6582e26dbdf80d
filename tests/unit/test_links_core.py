"""The pure part of magic links: status, the abuse throttle, form text to a payload."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskflow.core.definition import fields as fl
from taskflow.core.links import links

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LIMITS = links.Limits()


def _link(**changes: object) -> links.LinkView:
    base = links.LinkView(
        id="l",
        run_id="r",
        slot_id="s",
        event="e",
        recipient_name=None,
        recipient_email="Vendor@Example.com",
        created_by="olga",
        created_at=T0,
        expires_at=T0 + timedelta(hours=1),
    )
    return links.LinkView(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_status_precedence_and_expiry_edge() -> None:
    assert links.status(_link(), T0 + timedelta(seconds=3599)) == links.ACTIVE
    assert links.status(_link(), T0 + timedelta(hours=1)) == links.EXPIRED
    used_late = _link(consumed_at=T0, revoked_at=T0)
    assert links.status(used_late, T0 + timedelta(days=9)) == links.USED
    assert links.status(_link(revoked_at=T0), T0 + timedelta(days=9)) == links.REVOKED
    assert _link().recipient_key == "email:vendor@example.com"


def test_free_refusals_cost_nothing_then_waits_double_then_the_client_is_blocked() -> None:
    state = None
    now = T0
    for _ in range(LIMITS.free):
        state = links.after_refusal(state, now, LIMITS)
        assert links.wait_left(state, now) is None
    waits = []
    for _ in range(LIMITS.free, LIMITS.block_after - 1):
        state = links.after_refusal(state, now, LIMITS)
        left = links.wait_left(state, now)
        assert left is not None
        waits.append(int(left.total_seconds()))
        now += left
        assert links.wait_left(state, now) is None
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60, 60, 60, 60]
    state = links.after_refusal(state, now, LIMITS)
    assert state.failures == LIMITS.block_after
    assert state.blocked_until == T0 + LIMITS.window
    # A new window starts clean.
    fresh = links.after_refusal(state, T0 + LIMITS.window, LIMITS)
    assert (fresh.failures, fresh.blocked_until) == (1, None)


@given(st.lists(st.integers(min_value=0, max_value=120), max_size=60))
def test_a_client_is_never_blocked_past_its_window_nor_longer_than_the_max_wait(
    gaps: list[int],
) -> None:
    state = None
    now = T0
    for gap in gaps:
        now += timedelta(seconds=gap)
        if links.wait_left(state, now) is not None:
            continue  # refused with 429: not counted
        state = links.after_refusal(state, now, LIMITS)
        assert state.blocked_until is None or (
            state.blocked_until <= state.window_start + LIMITS.window
            or state.blocked_until - now <= LIMITS.max_wait
        )
        assert state.failures <= LIMITS.block_after


def test_form_text_becomes_a_payload_of_declared_fields() -> None:
    fields = (fl.Field.file("document"), fl.Field.date("valid_until", required=False))
    form = {"_page": "token", "document": "ref", "valid_until": " ", "colour": "red"}
    assert links.payload_from_form(fields, form) == {"document": "ref", "colour": "red"}
    with pytest.raises(fl.PayloadError) as refused:  # undeclared fields are named, not dropped
        fl.validate_payload(fields, links.payload_from_form(fields, form))
    assert links.form_problems(refused.value) == {
        "colour": "not a field of this slot (it takes document, valid_until)"
    }
