"""The calendar benchmark's case generator and taskflow side still run (no peers, no timing)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from taskflow.config import PROJECT_ROOT
from taskflow.core import calendars
from tests.unit.calendars.helpers import shipped


def _bench() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "calendar.py"
    spec = importlib.util.spec_from_file_location("taskflow_bench_calendar", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_benchmark_cases_run_through_taskflow() -> None:
    bench = _bench()
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
