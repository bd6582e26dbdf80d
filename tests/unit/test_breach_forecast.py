"""The breach forecast's model: the share of comparable past visits (those that had lasted
as long as this one) that went on past this one's due point, with the reason in words."""

from __future__ import annotations

import pytest

from taskflow.core.clocks.breach_forecast import forecast

H = 3600.0


def test_the_share_of_comparable_visits_that_ran_past_the_due_point() -> None:
    # 100 past visits lasting 1 h .. 100 h.
    past = [float(n) * H for n in range(1, 101)]
    found = forecast(past, elapsed=50 * H, left=25 * H, state="legal_review")
    # Lasted 50 h or more: 51 visits (50..100 h); past 75 h: 25 of them.
    assert (found.comparable, found.late) == (51, 25)
    assert found.probability == pytest.approx(25 / 51)
    assert found.reason == (
        "of 51 past visits of legal_review that lasted 50.0h or more, "
        "25 lasted past 75.0h (this one's due point): 49%"
    )


def test_an_overdue_visit_is_judged_from_now_and_a_fresh_one_from_all() -> None:
    past = [float(n) * H for n in range(1, 41)]
    fresh = forecast(past, elapsed=0, left=30 * H, state="s")
    assert (fresh.comparable, fresh.late) == (40, 10)
    overdue = forecast(past, elapsed=10 * H, left=-5 * H, state="s")
    assert overdue.late == 30  # nothing left: every comparable visit that went on is late


def test_too_few_comparable_visits_say_not_enough_history() -> None:
    past = [float(n) * H for n in range(1, 31)]
    found = forecast(past, elapsed=15 * H, left=H, state="review")
    assert found.probability is None
    assert found.reason.startswith("not enough history: 16 past visits of review lasted 15.0h")
    assert forecast(past, elapsed=0, left=H, state="review", min_history=40).probability is None
