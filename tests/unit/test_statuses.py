"""Statuses as enums, moves as one table: every legal move lands where the table says and
every other one is refused with the typed refusal the slot code raised before the table;
status literals in the store's SQL are members of the enums."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskflow.core.clocks import timer_states
from taskflow.core.clocks.timer_states import TimerMove, TimerStatus
from taskflow.core.definition import audience as au
from taskflow.core.delivery.webhook_events import DeliveryStatus
from taskflow.core.runs import refusals, statuses
from taskflow.core.runs.model import SlotView
from taskflow.core.runs.statuses import (
    MOVES,
    ChildStatus,
    RunStatus,
    SlotMove,
    SlotStatus,
    StepStatus,
)
from taskflow.core.slots import slots
from taskflow.service.automations import automations as automation_service
from taskflow.service.workspaces import workspaces as workspace_service
from tests.unit.slot_views import slot_view

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
ME = frozenset({"user:me"})
STORE = Path(__file__).resolve().parents[2] / "taskflow" / "store"


def slot(status: SlotStatus, holder: str | None = None) -> SlotView:
    claimed_at = NOW if holder else None
    return slot_view(
        ME, status=status, delegates=au.Audience(keys=ME), holder=holder, claimed_at=claimed_at
    )


def _claim(s: SlotView) -> SlotView:
    return slots.claim(s, "me", ME, NOW, None)


def _release(s: SlotView) -> SlotView:
    return slots.release(s, "me", ME, NOW)


def _assign(s: SlotView) -> SlotView:
    return slots.assign(s, "me", ME, "me", ME, NOW, None)


def _complete(s: SlotView) -> SlotView:
    slots.check_may_complete(s, "me", ME, None, None)
    return s


MADE = {
    SlotMove.CLAIM: _claim,
    SlotMove.RELEASE: _release,
    SlotMove.ASSIGN: _assign,
    SlotMove.COMPLETE: _complete,
}


def _holder(status: SlotStatus) -> str | None:
    return "me" if status is SlotStatus.CLAIMED else None


@pytest.mark.parametrize("status", list(SlotStatus))
@pytest.mark.parametrize("move", list(MADE))
def test_slot_moves_follow_the_table(status: SlotStatus, move: SlotMove) -> None:
    before = slot(status, holder=_holder(status))
    if (status, move) in MOVES:
        after = MADE[move](before)
        if move is not SlotMove.COMPLETE:  # completing is the engine's, after the check
            assert after.status == MOVES[status, move]
        return
    # Refused with the typed refusal of today: a claimed slot is already claimed, any
    # other status is not open.
    expected = (
        refusals.AlreadyClaimed
        if move is SlotMove.CLAIM and status is SlotStatus.CLAIMED
        else refusals.SlotNotOpen
    )
    with pytest.raises(expected) as refused:
        MADE[move](before)
    if expected is refusals.SlotNotOpen:
        assert refused.value.facts["status"] == status


def test_claiming_a_slot_someone_else_holds_names_them() -> None:
    with pytest.raises(refusals.AlreadyClaimed, match="'bob'"):
        _claim(slot(SlotStatus.CLAIMED, holder="bob"))


def test_the_table_says_which_statuses_are_live_and_ended() -> None:
    assert {SlotStatus.PENDING, SlotStatus.OPEN, SlotStatus.CLAIMED} == statuses.LIVE
    assert {SlotStatus.SATISFIED, SlotStatus.CANCELLED, SlotStatus.EXPIRED} == statuses.ENDED
    for status in statuses.ENDED:
        assert not any(statuses.allows(status, move) for move in SlotMove)


def test_after_refuses_a_move_the_table_lacks() -> None:
    assert statuses.after("pending", SlotMove.OPEN) is SlotStatus.OPEN
    with pytest.raises(ValueError, match="A satisfied slot cannot claim"):
        statuses.after("satisfied", SlotMove.CLAIM)


@pytest.mark.parametrize("status", list(TimerStatus))
@pytest.mark.parametrize("move", list(TimerMove))
def test_timer_moves_follow_the_table(status: TimerStatus, move: TimerMove) -> None:
    if (status, move) in timer_states.MOVES:
        assert timer_states.after(status, move) is timer_states.MOVES[status, move]
    else:
        assert not timer_states.allows(status, move)
        with pytest.raises(ValueError, match=f"A {status.value} timer cannot"):
            timer_states.after(status, move)


def test_only_a_dead_timer_is_retried_or_discarded_and_parked_ones_are_not_planned() -> None:
    for move in (TimerMove.RETRY, TimerMove.DISCARD):
        assert {s for s in TimerStatus if timer_states.allows(s, move)} == {TimerStatus.DEAD}
    assert {TimerStatus.DEAD, TimerStatus.DISCARDED} == timer_states.PARKED


# -- status literals in the store's SQL ----------------------------------------------------------

_KNOWN = {
    "t": {s.value for s in TimerStatus},
    "r": {s.value for s in RunStatus},
    "run": {s.value for s in RunStatus},
    "timer": {s.value for s in TimerStatus},
    # webhook deliveries (store/delivery/webhooks.sql): d, p the rows, o an attempt's outcome
    **{key: {s.value for s in DeliveryStatus} for key in ("d", "p", "o")},
    "st": {s.value for s in StepStatus},
    "rc": {s.value for s in ChildStatus},
    "step": {s.value for s in StepStatus},
    # automations (store/automations, attention.sql): a the automation row
    "a": set(automation_service.MOVES),
    "automation": set(automation_service.MOVES),
    # workspaces (store/access/principals.py reads a principal's)
    "ws": set(workspace_service.STATUSES),
}
_SLOT = {s.value for s in SlotStatus}
_ANY = _SLOT | _KNOWN["t"] | _KNOWN["r"] | _KNOWN["st"] | _KNOWN["rc"]
_COMPARED = re.compile(r"(?:\b(\w+)\.)?\bstatus\s*(?:=|<>|!=)\s*'([^']*)'")
_LISTED = re.compile(r"(?:\b(\w+)\.)?\bstatus\s+(?:NOT\s+)?IN\s*\(([^)]*)\)", re.IGNORECASE)


def status_literals(text: str) -> list[tuple[str | None, str]]:
    """(table alias or None, literal) for each status compared with or listed against."""
    found = [(m.group(1), m.group(2)) for m in _COMPARED.finditer(text)]
    for m in _LISTED.finditer(text):
        found += [(m.group(1), v) for v in re.findall(r"'([^']*)'", m.group(2))]
    return found


def unknown_statuses(text: str) -> list[str]:
    bad = []
    for alias, value in status_literals(text):
        known = _KNOWN.get(alias or "", _SLOT if alias in {"sl", "x", "s", "c", "slot"} else _ANY)
        if value not in known and "{" not in value:  # "{status}": written from the enum
            bad.append(f"{alias + '.' if alias else ''}status '{value}'")
    return bad


def test_the_check_finds_planted_statuses() -> None:
    assert unknown_statuses("WHERE t.status = 'armd' AND sl.status IN ('open', 'done')") == [
        "t.status 'armd'",
        "sl.status 'done'",
    ]
    assert unknown_statuses("WHERE r.status = 'active' AND x.status IN ('pending')") == []


@pytest.mark.parametrize(
    "path", sorted([*STORE.rglob("*.sql"), *STORE.rglob("*.py")]), ids=lambda p: p.name
)
def test_every_status_in_the_stores_sql_is_a_member_of_its_enum(path: Path) -> None:
    assert unknown_statuses(path.read_text(encoding="utf-8")) == []


def test_the_sql_check_saw_statuses() -> None:
    text = (STORE / "slots" / "queries.sql").read_text(encoding="utf-8")
    assert len(status_literals(text)) > 10
