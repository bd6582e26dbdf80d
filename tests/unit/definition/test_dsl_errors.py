"""The DSL raises its own typed errors (DefinitionError children) naming the workflow, the
state and the fix, where it raised bare KeyError / TypeError / ValueError before (and those
who caught the builtin errors still catch them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from taskflow import Route, Slot, State, Workflow, real, subject, who
from taskflow.core.definition import DefinitionError
from taskflow.core.definition.checks import problems as p
from taskflow.service.versions import definitions


class Leave(Workflow):
    name = "leave-dsl"
    tracks = "leave-request"

    asked = State(
        initial=True,
        slots=[Slot("approve", candidates=who.role("manager"))],
        then=[Route("granted")],
    )
    granted = State(terminal=True)


def test_an_unknown_state_names_the_workflow_the_state_and_the_known_ones() -> None:
    definition = Leave.definition
    assert definition is not None
    with pytest.raises(p.UnknownState) as caught:
        definition.state("approved")
    error = caught.value
    assert isinstance(error, DefinitionError)
    assert isinstance(error, KeyError)  # what callers caught before
    assert error.codes == ("UNKNOWN_STATE",)
    (problem,) = error.problems
    assert (problem.workflow, problem.where) == ("leave-dsl", "state approved")
    assert "asked, granted" in problem.fix
    assert str(error).startswith("workflow 'leave-dsl', state approved:")


def test_an_unknown_slot_or_move_names_the_state_and_its_slots() -> None:
    definition = Leave.definition
    assert definition is not None
    asked = definition.state("asked")
    with pytest.raises(p.UnknownSlot, match="state 'asked' has no slot 'review'") as slot:
        asked.slot("review")
    assert "approve" in slot.value.problems[0].fix
    with pytest.raises(p.UnknownMove) as move:
        asked.move("escalate")
    assert isinstance(move.value, KeyError)
    assert "Move('escalate'" in move.value.problems[0].fix


def test_misused_conditions_audiences_and_budgets_are_typed_with_a_fix() -> None:
    with pytest.raises(p.ConditionMisused, match=r"Fix: combine conditions with & \| ~"):
        bool(subject.amount > 1)
    with pytest.raises(p.NotAnAudience) as audience:
        who.role("a") | "finance"  # type: ignore[operator]
    assert isinstance(audience.value, TypeError)
    assert audience.value.codes == ("NOT_AN_AUDIENCE",)
    with pytest.raises(p.CalendarOnRealTime, match="Fix: drop calendar="):
        real.hours(4, calendar="uk-london")


def test_the_loader_reports_a_typed_mistake_with_its_code_and_fix(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(
        textwrap.dedent(
            """
            from taskflow import State, Workflow, real, timeout

            class Broken(Workflow):
                name = "broken"
                tracks = "thing"
                first = State(
                    initial=True,
                    timeouts=[timeout(real.hours(4, calendar="uk-london"), move_to="done")],
                )
                done = State(terminal=True)
            """
        )
    )
    with pytest.raises(DefinitionError) as caught:
        definitions.load([str(tmp_path)], set())
    # Before: SOURCE_FAILED, "importing it raised ValueError: ...".
    (problem,) = caught.value.problems
    assert problem.code == "CALENDAR_ON_REAL_TIME"
    assert problem.fix.startswith("drop calendar=")
    assert problem.source.endswith("broken.py")
