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
