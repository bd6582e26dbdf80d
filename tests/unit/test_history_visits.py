"""A run's visits, literal and effective, through undos, redos and a cancellation (pure)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from taskflow.core.history import visits
from tests.conftest import T0


def at(minutes: int) -> Any:
    return T0 + timedelta(minutes=minutes)


def entry(line: int, minutes: int, state: str, via: str = "route", **more: Any) -> visits.Line:
    return visits.Line(
        line, visits.ENTERED, at(minutes), "ada", {"state": state, "via": via, **more}
    )


LINES = [
    entry(1, 0, "draft", "start"),
    entry(2, 10, "review"),
    entry(3, 20, "legal"),
    entry(4, 30, "review", "undo", reverses=3),  # legal rewound
]


def test_literal_keeps_the_rewound_visit_and_marks_it() -> None:
    found = visits.visits(LINES, effective=False)
    assert [(v.state, v.left_at, v.undone_by) for v in found] == [
        ("draft", at(10), None),
        ("review", at(20), None),
        ("legal", at(30), 4),
        ("review", None, None),
    ]
    assert visits.state_at(LINES, at(25), effective=False).state == "legal"  # type: ignore[union-attr]


def test_effective_reads_as_if_the_rewound_visit_never_happened() -> None:
    found = visits.standing(visits.visits(LINES, effective=True))
    assert [(v.state, v.entered_at, v.left_at) for v in found] == [
        ("draft", at(0), at(10)),
        ("review", at(10), None),
    ]
    assert visits.state_at(LINES, at(25), effective=True).state == "review"  # type: ignore[union-attr]


def test_a_redo_restores_the_visit_as_it_first_stood() -> None:
    redone = [*LINES, entry(5, 40, "legal", "undo", reverses=4)]
    found = visits.standing(visits.visits(redone, effective=True))
    assert [(v.state, v.entered_at, v.left_at) for v in found] == [
        ("draft", at(0), at(10)),
        ("review", at(10), at(20)),
        ("legal", at(20), None),
    ]
    literal = visits.visits(redone, effective=False)
    assert [(v.state, v.undone_by) for v in literal][-2:] == [("review", 5), ("legal", None)]


def test_a_cancelled_run_stands_nowhere_after_and_nothing_before_it_started() -> None:
    cancelled = [*LINES, visits.Line(6, visits.CANCELLED, at(50), "max", {})]
    assert visits.state_at(cancelled, at(49), effective=True).state == "review"  # type: ignore[union-attr]
    assert visits.state_at(cancelled, at(50), effective=True) is None
    assert visits.state_at(cancelled, at(-1), effective=False) is None
    assert visits.visits(cancelled, effective=False)[-1].left_at == at(50)
