"""Regression flags of workflow insights: a version whose breach or failure rate rose by more
than five points over the version before it is flagged, naming what rose and by how much."""

from __future__ import annotations

from taskflow.core.history.regressions import Rates, flags, percent


def _rates(version: int, breached: int, failed: int, workflow: str = "w") -> Rates:
    return Rates(workflow, version, measured=100, breached=breached, ended=50, failed=failed)


def test_a_rise_over_five_points_is_flagged_against_the_previous_version() -> None:
    rows = [_rates(1, breached=10, failed=5), _rates(2, breached=16, failed=7), _rates(3, 20, 7)]
    assert flags(rows) == {("w", 2): ["breach rate +6.0 points over v1"]}


def test_five_points_exactly_or_a_fall_is_not_flagged() -> None:
    assert flags([_rates(1, 10, 5), _rates(2, 15, 0)]) == {}


def test_both_rates_and_only_within_one_workflow() -> None:
    rows = [_rates(1, 0, 0, "a"), _rates(2, 10, 10, "a"), _rates(1, 0, 0, "b")]
    assert flags(rows) == {
        ("a", 2): ["breach rate +10.0 points over v1", "failure rate +20.0 points over v1"]
    }


def test_a_version_with_nothing_measured_flags_nothing() -> None:
    empty = Rates("w", 2, measured=0, breached=0, ended=0, failed=0)
    assert flags([_rates(1, 0, 0), empty]) == {}
    assert percent(0, 0) is None
