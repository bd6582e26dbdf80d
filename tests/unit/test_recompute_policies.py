"""A budget changed mid-run under each recompute policy: the due instant, the breach on
record and the deadline in force at each instant (docs/sla.md, "Recompute policies").

The calendar is uk-london (09:00-17:30, Monday to Friday; UTC in December); the clock
starts Tuesday 1 December 2026 at 09:00 unless said otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from taskflow.config import config
from taskflow.core.clocks import clocks, terms
from taskflow.core.definition import budgets as bu
from taskflow.service.clocks import calendar_files

LONDON = calendar_files.load_folder(config.PROJECT_ROOT / "calendars").get("uk-london")


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC)


def hours(n: float) -> bu.ResolvedBudget:
    return bu.ResolvedBudget("business", timedelta(hours=n), "uk-london")


def started(budget: float) -> clocks.Clock:
    return clocks.start("finished", hours(budget), at(1, 9))


@pytest.mark.parametrize(
    ("policy", "due", "breached"),
    [
        # 4h spent of the new 2h: breached at the recompute itself, never before it.
        (clocks.KEEP_ELAPSED, at(1, 13), at(1, 13)),
        # Counting again from 13:00: two business hours.
        (clocks.RESTART, at(1, 15), None),
        # As if 2h had applied from 09:00: due 11:00, a breach back-dated to then.
        (clocks.RETROACTIVE, at(1, 11), at(1, 11)),
    ],
)
def test_a_shorter_budget_at_13_00(policy: str, due: datetime, breached: datetime | None) -> None:
    now = at(1, 13)
    clock = clocks.rebudget(started(8), hours(2), now, policy)
    assert clocks.due_at(clock, LONDON) == due
    assert clocks.breached_at(clock, LONDON, now) == breached
    assert (clocks.status(clock, LONDON, now) == clocks.BREACHED) == (breached is not None)
    # Before 13:00 the 8h deadline (Tuesday 17:00) was in force, from 13:00 the new one.
    assert terms.deadline_at(clock, LONDON, at(1, 12, 59)) == at(1, 17)
    assert terms.deadline_at(clock, LONDON, now) == due


@pytest.mark.parametrize(
    ("policy", "due", "breached", "status"),
    [
        # The 11:00 breach happened under the deadline then in force: it stays on record.
        (clocks.KEEP_ELAPSED, at(1, 17), at(1, 11), clocks.BREACHED),
        (clocks.RESTART, at(2, 12, 30), at(1, 11), clocks.BREACHED),
        # Judged again from the start on 8h: no breach (4h of 8h spent).
        (clocks.RETROACTIVE, at(1, 17), None, clocks.RUNNING),
    ],
)
def test_a_longer_budget_after_a_breach(
    policy: str, due: datetime, breached: datetime | None, status: str
) -> None:
    now = at(1, 13)
    clock = clocks.rebudget(started(2), hours(8), now, policy)
    assert clocks.due_at(clock, LONDON) == due
    assert clocks.breached_at(clock, LONDON, now) == breached
    assert clocks.status(clock, LONDON, now) == status
    listed = terms.in_force(clock, LONDON, now)
    assert [(t.since, t.until, t.due_at, t.breached) for t in listed] == [
        (at(1, 9), now, at(1, 11), True),
        (now, None, due, False),
    ]
    assert listed[1].policy == policy


def test_elapsed_time_skips_pauses_under_every_policy() -> None:
    # Paused 10:00-12:00: at 13:00 two business hours are spent.
    clock = clocks.resume(clocks.pause(started(8), at(1, 10)), at(1, 12))
    now = at(1, 13)
    assert clocks.elapsed(clock, LONDON, now) == timedelta(hours=2)
    keep = clocks.rebudget(clock, hours(4), now, clocks.KEEP_ELAPSED)
    assert clocks.due_at(keep, LONDON) == at(1, 15)  # 09-10 and 12-15
    assert clocks.due_at(clocks.rebudget(clock, hours(4), now, clocks.RESTART), LONDON) == at(1, 17)
    back = clocks.rebudget(clock, hours(1), now, clocks.RETROACTIVE)
    assert clocks.due_at(back, LONDON) == at(1, 10)  # ran out as the pause began
    assert clocks.breached_at(back, LONDON, now) == at(1, 10)
    kept = clocks.rebudget(clock, hours(1), now, clocks.KEEP_ELAPSED)
    assert clocks.due_at(kept, LONDON) == now
    restarted = clocks.rebudget(clock, hours(4), now, clocks.RESTART)
    assert clocks.elapsed(restarted, LONDON, at(1, 14)) == timedelta(hours=1)


def test_a_restart_while_paused_waits_for_the_resume() -> None:
    paused = clocks.pause(started(8), at(1, 10))
    clock = clocks.rebudget(paused, hours(2), at(1, 11), clocks.RESTART)
    assert clock.paused
    assert clocks.due_at(clock, LONDON) is None
    assert clocks.elapsed(clock, LONDON, at(1, 11, 30)) == timedelta(0)
    resumed = clocks.resume(clock, at(1, 12))
    assert clocks.due_at(resumed, LONDON) == at(1, 14)


def test_a_restart_over_a_weekend_counts_business_time_from_the_recompute() -> None:
    # Friday 16:00, 8h -> 4h: 1h30 on Friday, 2h30 on Monday.
    clock = clocks.start("finished", hours(8), at(4, 10))
    moved = clocks.rebudget(clock, hours(4), at(4, 16), clocks.RESTART)
    assert clocks.due_at(moved, LONDON) == at(7, 11, 30)


def test_recomputes_chain_and_a_retroactive_one_judges_all_again() -> None:
    clock = started(2)  # due 11:00
    clock = clocks.rebudget(clock, hours(8), at(1, 12), clocks.KEEP_ELAPSED)  # 11:00 breach kept
    clock = clocks.rebudget(clock, hours(3), at(1, 13), clocks.KEEP_ELAPSED)  # 4h spent: 13:00
    assert clocks.breached_at(clock, LONDON, at(1, 13)) == at(1, 11)
    assert [t.due_at for t in terms.in_force(clock, LONDON, at(1, 13))] == [
        at(1, 11),
        at(1, 17),
        at(1, 13),
    ]
    clock = clocks.rebudget(clock, hours(6), at(1, 14), clocks.RETROACTIVE)
    assert clocks.due_at(clock, LONDON) == at(1, 15)
    assert clocks.breached_at(clock, LONDON, at(1, 14)) is None
    assert clocks.breached_at(clock, LONDON, at(1, 15)) == at(1, 15)


def test_the_same_budget_or_a_met_clock_is_no_recompute() -> None:
    clock = started(8)
    assert clocks.rebudget(clock, hours(8), at(1, 12), clocks.RESTART) is clock
    met = clocks.meet(clock, at(1, 12))
    assert clocks.rebudget(met, hours(2), at(1, 13), clocks.RESTART) is met


def test_each_term_keeps_its_own_calendar() -> None:
    # Two London days (17 business hours) from Tuesday 09:00, then at 13:00 eight hours
    # round the clock: the first term's deadline is Wednesday 17:30 on uk-london (not 24x7).
    registry = calendar_files.load_folder(config.PROJECT_ROOT / "calendars")
    london = bu.ResolvedBudget("business", timedelta(0), "uk-london", working_days=2)
    around = bu.ResolvedBudget("business", timedelta(hours=8), "24x7")
    clock = clocks.rebudget(clocks.start("finished", london, at(1, 9)), around, at(1, 13))
    cal = registry.get("24x7")
    assert clocks.due_at(clock, cal) == at(1, 17)  # 4h spent, 4h left round the clock
    listed = terms.in_force(clock, cal, at(1, 13), registry)
    assert [t.due_at for t in listed] == [at(2, 17, 30), at(1, 17)]
    assert terms.deadline_at(clock, cal, at(1, 12), registry) == at(2, 17, 30)
