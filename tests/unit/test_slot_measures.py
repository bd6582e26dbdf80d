"""A slot's report measures from its clock ledger and timeline (core.slot_measures)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskflow.config import config
from taskflow.core.clocks import calendars, clocks
from taskflow.core.definition import budgets as bu
from taskflow.core.reports import slot_measures as sm
from taskflow.service.clocks import calendar_files

LONDON = calendar_files.load_folder(config.PROJECT_ROOT / "calendars").get("uk-london")
H = 3600 * 1_000_000


def utc(day: int, hour: int, minute: int = 0) -> datetime:
    """Late November 2026 (London is on UTC; uk-london works Mon-Fri 09:00-17:30)."""
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def clock(milestone: str, *pauses: tuple[datetime, datetime | None]) -> clocks.Clock:
    budget = bu.ResolvedBudget("business", timedelta(hours=8), "uk-london")
    return clocks.Clock(milestone, budget, utc(23, 16), tuple(clocks.Pause(*p) for p in pauses))


def test_the_finished_clock_is_the_one_measured() -> None:
    assigned, finished = clock("assigned"), clock("finished")
    assert sm.report_clock((assigned, finished)) is finished
    assert sm.report_clock((assigned,)) is assigned
    assert sm.report_clock(()) is None


def test_pickup_is_the_first_hold_and_worked_time_leaves_pauses_out() -> None:
    # Opened Mon 16:00; claimed Tue 10:00, released 11:00, claimed 12:00, done Wed 10:00;
    # paused Tue 14:00-16:00 while held.
    moves = [
        sm.Move("slot.claimed", utc(24, 10)),
        sm.Move("slot.released", utc(24, 11)),
        sm.Move("slot.claimed", utc(24, 12)),
        sm.Move("slot.satisfied", utc(25, 10)),
    ]
    found = sm.measure(
        opened_at=utc(23, 16),
        claimed_at=utc(24, 12),
        satisfied_at=utc(25, 10),
        ended_at=utc(25, 10),
        clock=clock("finished", (utc(24, 14), utc(24, 16))),
        calendar=LONDON,
        moves=moves,
    )
    assert found.clock == "finished"
    assert (found.pickup_business, found.pickup_real) == (2.5 * H, 18 * H)
    # Business: Mon 1.5 h + Tue 8.5 h + Wed 1 h, less 2 h paused; real: 42 h less 2 h.
    assert (found.done_business, found.done_real) == (9 * H, 40 * H)
    # Held 1 h + 22 h, less 2 h paused.
    assert found.worked == 21 * H


def test_a_slot_cancelled_from_open_was_never_picked_up() -> None:
    found = sm.measure(
        opened_at=utc(23, 16),
        claimed_at=None,
        satisfied_at=None,
        ended_at=utc(24, 9),
        clock=None,
        calendar=calendars.REAL_TIME,
        moves=[sm.Move("slot.cancelled", utc(24, 9))],
    )
    assert (found.clock, found.pickup_business, found.done_real, found.worked) == (
        "",
        None,
        None,
        0,
    )


def test_a_reassignment_holds_for_a_person_and_ends_the_hold_for_a_pool() -> None:
    # Open Mon 16:00; the breach hands it to a person Tue 10:00 (its pickup); she works it
    # until Tue 11:00, when the next escalation returns it to the leads' pool; a lead claims
    # it at 12:00 and completes it at 13:00.
    moves = [
        sm.Move("slot.reassigned", utc(24, 10), held=True),
        sm.Move("slot.reassigned", utc(24, 11), held=False),
        sm.Move("slot.claimed", utc(24, 12)),
        sm.Move("slot.satisfied", utc(24, 13)),
    ]
    assert sm.held(moves, utc(24, 14)) == [(utc(24, 10), utc(24, 11)), (utc(24, 12), utc(24, 13))]
    found = sm.measure(
        opened_at=utc(23, 16),
        claimed_at=utc(24, 12),
        satisfied_at=utc(24, 13),
        ended_at=utc(24, 13),
        clock=None,
        calendar=LONDON,
        moves=moves,
    )
    # Mon 16:00-17:30 and Tue 09:00-10:00 of business time; 18 hours of real time.
    assert (found.pickup_business, found.pickup_real) == (2.5 * H, 18 * H)
    assert found.worked == 2 * H
