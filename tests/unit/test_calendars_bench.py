"""The calendar benchmark's case generator and taskflow side still run (no peers, no timing)."""

from __future__ import annotations

from taskflow.core.clocks import calendars
from tests import benches
from tests.unit.calendars.helpers import shipped


def test_benchmark_cases_run_through_taskflow() -> None:
    bench = benches.load("calendar")
    registry = shipped()
    cases = bench.generate(50, 7, registry)
    assert len(cases) == 50
    assert {case.calendar for case in cases} <= registry.names()
    result = bench.taskflow_results(cases, registry, timed=False)
    for case, due, worked in zip(cases, result.adds, result.elapseds, strict=True):
        calendar: calendars.Calendar = registry.get(case.calendar)
        assert due is not None
        assert worked is not None
        assert calendar.elapsed(case.start, due) == case.budget
    assert not result.errors


def test_the_piecewise_run_uses_twenty_versions_and_answers_consistently() -> None:
    bench = benches.load("calendar")
    registry = shipped()
    calendar = bench.versioned(registry.get("uk-london"), bench.VERSIONS, 1)
    assert len(calendar.versions) == bench.VERSIONS + 1
    cases = bench.generate(50, 7, registry)
    result = bench.piecewise_results(cases, registry)
    pieces = {
        n: bench.versioned(registry.get(n), bench.VERSIONS, i)
        for i, n in enumerate(bench.CALENDARS)
    }
    for case, due in zip(cases, result.adds, strict=True):
        assert due is not None
        assert pieces[case.calendar].elapsed(case.start, due) == case.budget
    assert "bound 1.5x" in bench.piecewise_line(result, result)
