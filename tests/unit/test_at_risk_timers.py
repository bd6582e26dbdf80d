"""The ``at_risk`` timer: planned by the one planner where a running clock's spent business
time reaches the at-risk share of its budget, cancelled when the clock is met or paused,
re-planned on resume (issue 19, ``clock.at_risk``)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from taskflow.core.clocks import clock_lines, clocks, deadlines
from taskflow.core.clocks.timer_states import TimerRow, TimerStatus
from taskflow.core.common import unit_of_work as uow
from taskflow.core.runs.model import Outcome, SlotView
from taskflow.core.slots import slots as slot_moves
from tests.unit.test_clocks import LONDON, REGISTRY, hours
from tests.unit.test_deadlines import AGENT, SUPPORT, TICKET, triaged


def test_the_at_risk_instant_is_in_business_time() -> None:
    # Friday 16:00 with 4 business hours (London, 9:00-17:30): 3 h is 75 %, so 1.5 h on
    # Friday and 1.5 h on Monday: Monday 10:30, not Friday 19:00.
    clock = clocks.start("finished", hours(4), datetime(2026, 12, 4, 16, tzinfo=UTC))
    at = deadlines.at_risk_at(clock, LONDON)
    assert at == datetime(2026, 12, 7, 10, 30, tzinfo=UTC)
    assert clocks.status(clock, LONDON, at - timedelta(seconds=1)) == clocks.RUNNING
    assert clocks.status(clock, LONDON, at) == clocks.AT_RISK
    assert deadlines.at_risk_at(clock, LONDON, 0.5) == datetime(2026, 12, 7, 9, 30, tzinfo=UTC)


def _timers(writes: uow.Writes, loaded: list[TimerRow] | None = None) -> list[TimerRow]:
    """The stored rows after ``writes`` (new rows get ids as a database would)."""
    rows = {t.key: t for t in loaded or []}
    for i, t in enumerate(writes.timers, start=len(rows) + 1):
        rows[t.key] = dataclasses.replace(t, id=t.id or i)
    return list(rows.values())


def _plan(before: SlotView, after: SlotView, timers: list[TimerRow], now: datetime) -> uow.Writes:
    ticket_run = triaged().run
    return uow.plan(
        Outcome(ticket_run, (), (after,), (), run_changed=False),
        uow.context(SUPPORT, REGISTRY, [before]),
        timers,
        now,
        rows=False,
    )


def _at_risk(timers: list[TimerRow]) -> dict[str, tuple[str, datetime]]:
    return {t.ref: (t.status, t.due_at) for t in timers if t.kind == deadlines.AT_RISK}


def test_planned_per_running_clock_cancelled_when_met_replanned_on_resume() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    now = ticket.now
    armed = _timers(_plan(slot, slot, [], now))
    due = {
        c.milestone: deadlines.at_risk_at(c, clocks.calendar_of(REGISTRY, c)) for c in slot.clocks
    }
    assert _at_risk(armed) == {m: (TimerStatus.ARMED, d) for m, d in due.items()}
    assert all(t.slot_id == slot.id for t in armed if t.kind == deadlines.AT_RISK)

    # A claim meets the assigned clock: its at-risk timer is cancelled, finished's stays.
    claimed = slot_moves.claim(slot, "sasha", AGENT, now, None)
    claimed = deadlines.sync_clocks(SUPPORT, claimed, TICKET, now)
    after_claim = _timers(_plan(slot, claimed, armed, now), armed)
    assert _at_risk(after_claim) == {
        "assigned": (TimerStatus.CANCELLED, due["assigned"]),
        "finished": (TimerStatus.ARMED, due["finished"]),
    }

    # Paused: nothing is due; resumed an hour later: re-armed an hour later (business time).
    pause_at = now + timedelta(minutes=5)
    held = deadlines.paused(claimed, pause_at)
    after_pause = _timers(_plan(claimed, held, after_claim, pause_at), after_claim)
    assert _at_risk(after_pause)["finished"] == (TimerStatus.CANCELLED, due["finished"])
    resume_at = pause_at + timedelta(hours=1)
    running = deadlines.resumed(held, resume_at)
    after_resume = _timers(_plan(held, running, after_pause, resume_at), after_pause)
    assert _at_risk(after_resume)["finished"] == (
        TimerStatus.ARMED,
        due["finished"] + timedelta(hours=1),
    )


def test_a_fired_at_risk_timer_is_not_armed_again_and_its_line_says_what_crossed() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    key = f"{slot.id}:{deadlines.AT_RISK}:finished"
    specs = deadlines.slot_timers(SUPPORT, slot, REGISTRY, {key: 1})
    assert key not in {s.key for s in specs}
    at = datetime(2026, 12, 1, 12, 10, tzinfo=UTC)
    line = clock_lines.clock_firing(deadlines.AT_RISK, slot, "finished", at, REGISTRY, at, {})
    assert (line.kind, line.slot_id) == ("clock.at_risk", slot.id)
    assert line.details == {
        "slot": "first_response",
        "milestone": "finished",
        "due_at": "2026-12-01T13:10:00+00:00",
        "at_risk_at": "2026-12-01T12:10:00+00:00",
    }


def test_the_share_comes_from_the_context_the_setting_fills() -> None:
    ticket = triaged()
    slot = ticket.named("first_response")
    ctx = uow.context(SUPPORT, REGISTRY, [slot], at_risk=0.5)
    writes = uow.plan(Outcome(ticket.run, (), (slot,), (), run_changed=False), ctx, [], ticket.now)
    finished = next(c for c in slot.clocks if c.milestone == "finished")
    half = deadlines.at_risk_at(finished, clocks.calendar_of(REGISTRY, finished), 0.5)
    assert _at_risk(list(writes.timers))["finished"] == (TimerStatus.ARMED, half)
