"""What an awaited start waits for, and its bounds (``core/runs/awaiting.py``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from taskflow import errors, who
from taskflow.core.definition import audience as au
from taskflow.core.runs import awaiting
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.runs.statuses import RunStatus, SlotStatus

T0 = datetime(2026, 12, 4, 9, tzinfo=UTC)
RUN = RunView(
    id="r",
    workflow="w",
    definition_version=1,
    state="check",
    status=RunStatus.ACTIVE,
    visit=0,
    subject={},
    state_entered_at=T0,
)


def _slot(status: SlotStatus, visit: int) -> SlotView:
    anyone = au.compile(who.anyone(), {})
    return SlotView("s", "r", visit, "review", "s", "done", status, anyone, anyone, 0, "s")


def test_each_wait_is_met_where_it_says() -> None:
    start = ("check", 0)
    moved = replace(RUN, state="review", visit=1)
    ended = replace(RUN, status=RunStatus.COMPLETED)
    wait = awaiting.WaitFor
    assert not awaiting.reached(wait.STATE, start, RUN, [])
    assert awaiting.reached(wait.STATE, start, moved, [])
    assert not awaiting.reached(wait.SLOT, start, moved, [_slot(SlotStatus.PENDING, 1)])
    assert not awaiting.reached(wait.SLOT, start, moved, [_slot(SlotStatus.OPEN, 0)])  # old visit
    assert awaiting.reached(wait.SLOT, start, moved, [_slot(SlotStatus.OPEN, 1)])
    assert awaiting.reached(wait.SLOT, start, moved, [_slot(SlotStatus.CLAIMED, 1)])
    assert not awaiting.reached(wait.END, start, moved, [_slot(SlotStatus.OPEN, 1)])
    assert all(awaiting.reached(w, start, ended, []) for w in wait)


def test_the_bound_is_one_to_thirty_seconds_and_needs_a_wait() -> None:
    assert awaiting.timeout_of(None, None) is None
    assert awaiting.timeout_of(awaiting.WaitFor.SLOT, None) == awaiting.DEFAULT_TIMEOUT
    assert awaiting.timeout_of(awaiting.WaitFor.END, 30) == 30
    for bad in (0, 31, -1):
        with pytest.raises(errors.ValidationError, match="between 1 and 30"):
            awaiting.timeout_of(awaiting.WaitFor.SLOT, bad)
    with pytest.raises(errors.ValidationError, match="give waitFor"):
        awaiting.timeout_of(None, 5)
