"""The forecast watch's rules (core/reports/forecast_watch.py): which slots a pass reads,
when the flag goes up (the line) and down (quietly), and the line itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskflow.core.reports import forecast_watch as fw
from taskflow.core.reports.forecast import BreachRisk, Peer

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _peer(opened_hours_ago: float, budget_hours: float = 10) -> Peer:
    opened = NOW - timedelta(hours=opened_hours_ago)
    return Peer(("w", "s", "review"), opened, opened + timedelta(hours=budget_hours), None, False)


def _risk(probability: float | None) -> BreachRisk:
    return BreachRisk(probability, "8 of 10 past slots breached", "all", 10, 8, 40, 0.5, "", "", 0)


def test_up_at_the_threshold_down_below_it_unchanged_without_history() -> None:
    assert fw.flag(_risk(0.7), None, 0.7) is True
    assert fw.flag(_risk(0.69), True, 0.7) is False
    assert fw.flag(_risk(None), True, 0.7) is True
    assert fw.flag(_risk(None), None, 0.7) is None


def test_the_line_is_written_only_as_the_flag_goes_up() -> None:
    assert fw.rises(None, True)
    assert fw.rises(False, True)
    assert not fw.rises(True, True)
    assert not fw.rises(True, False)
    assert not fw.rises(None, None)


def test_a_batch_is_bounded_least_recently_forecast_first_and_stops_at_the_at_risk_share() -> None:
    live = {
        "fresh": _peer(1),
        "older": _peer(2),
        "never": _peer(3),
        "late": _peer(8),  # 80 % of its budget: clock.at_risk speaks for it
        "overdue": _peer(12),
    }
    watched = {
        "fresh": fw.Watched(False, NOW - timedelta(minutes=1)),
        "older": fw.Watched(True, NOW - timedelta(minutes=30)),
    }
    assert fw.batch(live, watched, NOW, stop_share=0.75, size=10) == ["never", "older", "fresh"]
    assert fw.batch(live, watched, NOW, stop_share=0.75, size=2) == ["never", "older"]


def test_the_line_names_the_forecast_and_its_figures() -> None:
    peer = _peer(5)
    line = fw.line("slot-1", "review", peer, _risk(0.8), 0.7, NOW)
    assert (line.kind, line.slot_id, line.actor, line.at) == (fw.KIND, "slot-1", None, NOW)
    assert line.reason == "breach forecast 80 % reached 70 %: 8 of 10 past slots breached"
    assert line.details["due_at"] == "2026-12-01T14:00:00+00:00"
    assert (line.details["probability"], line.details["threshold"]) == (0.8, 0.7)
