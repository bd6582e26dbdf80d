"""Load-time checks of child runs: labels literal and unique, unknown child workflows, cycles
of awaited workflows across the loaded set, catch and failure placement; and the document."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from taskflow import Catch, Child, Route, Slot, State, child, who
from taskflow.core.definition import Definition, DefinitionError, define
from taskflow.core.definition.checks import validate
from taskflow.core.definition.conditions import expr as ex
from taskflow.service.versions import definitions

PAIR = """
from taskflow import Child, Route, Slot, State, Workflow, who

class A(Workflow):
    name = "a"
    tracks = "doc"
    waiting = State(initial=True, children=[Child({a_child!r}, label="x")], then="done")
    done = State(terminal=True)

class B(Workflow):
    name = "b"
    tracks = "doc"
    waiting = State(initial=True, children=[Child({b_child!r}, label="y", awaited={awaited})],
                    then="done")
    done = State(terminal=True)

class C(Workflow):
    name = "c"
    tracks = "doc"
    working = State(initial=True, slots=[Slot("s", candidates=who.role("r"))], then="done")
    done = State(terminal=True)
"""


def load(tmp_path: Path, **names: object) -> definitions.Catalog:
    (tmp_path / "pair.py").write_text(textwrap.dedent(PAIR.format(**names)))
    return definitions.load([str(tmp_path)])


def codes(error: pytest.ExceptionInfo[DefinitionError]) -> list[str]:
    return [p.code for p in error.value.problems]


def test_a_chain_of_awaits_loads(tmp_path: Path) -> None:
    catalog = load(tmp_path, a_child="b", b_child="c", awaited=True)
    assert catalog.get("a").state("waiting").awaits == ("x",)


def test_a_cycle_of_awaited_workflows_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError) as error:
        load(tmp_path, a_child="b", b_child="a", awaited=True)
    assert codes(error) == ["CHILD_CYCLE"]
    assert "a -> b -> a" in str(error.value)


def test_a_bare_start_breaks_the_cycle(tmp_path: Path) -> None:
    load(tmp_path, a_child="b", b_child="a", awaited=False)


def test_an_unknown_child_workflow_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError) as error:
        load(tmp_path, a_child="nowhere", b_child="c", awaited=True)
    assert codes(error) == ["UNKNOWN_WORKFLOW"]
    assert "'nowhere'" in str(error.value)


def _parent(**waiting: Any) -> Definition:
    return define(
        "p",
        tracks="doc",
        states={
            "waiting": State(initial=True, then=[Route("done")], **waiting),
            "other": State(children=[Child("c", label="x")], then="done"),
            "done": State(terminal=True),
        },
    )


def test_labels_must_be_literal_and_unique_in_the_definition() -> None:
    found = validate.problems(_parent(children=[Child("c", label="x")]))
    assert sorted(p.code for p in found) == ["DUPLICATE_CHILD_LABEL", "UNREACHABLE_STATE"]
    found = validate.problems(_parent(children=[Child("c", label="Not A Name")]))
    assert "BAD_CHILD_LABEL" in [p.code for p in found]


def test_awaiting_needs_a_state_of_its_own_and_catch_needs_a_child() -> None:
    with_slot = _parent(
        children=[Child("c", label="y")], slots=[Slot("s", candidates=who.role("r"))]
    )
    assert "AWAIT_WITH_WORK" in [p.code for p in validate.problems(with_slot)]
    ending = define(
        "p",
        tracks="doc",
        states={"a": State(initial=True, then="b"), "b": State(terminal=True, children=[
            Child("c", label="z", awaited=False)])},
    )  # fmt: skip
    assert "AWAIT_WITH_WORK" in [p.code for p in validate.problems(ending)]
    catching = _parent(catch=[Catch("done")])
    assert "CATCH_WITHOUT_CHILD" in [p.code for p in validate.problems(catching)]
    failing = define(
        "p",
        tracks="doc",
        states={"a": State(initial=True, then="b", failure=True), "b": State(terminal=True)},
    )
    assert "FAILURE_NOT_TERMINAL" in [p.code for p in validate.problems(failing)]


def test_routes_read_a_childs_outcome_and_the_document_keeps_children() -> None:
    rule = child("review").result.score >= 8
    env = ex.Env(child={"review": {"result": {"score": 9}}})
    assert ex.matches(rule, env)
    assert not ex.matches(rule, ex.Env(child={"review": {"result": {"score": 2}}}))
    assert ex.evaluate(rule, ex.Env()) is None  # no outcome yet: unknown
    d = define(
        "p",
        tracks="doc",
        states={
            "waiting": State(
                initial=True,
                children=[Child("c", label="review")],
                then=[Route("good", when=rule), Route("done")],
                catch=[Catch("done", kinds=["expired"])],
            ),
            "good": State(terminal=True),
            "done": State(terminal=True, failure="expired"),
        },
        result={"verdict": "kept"},
    )
    doc = d.to_document()
    assert doc["states"][0]["children"][0] == {
        "workflow": "c",
        "label": "review",
        "awaited": True,
        "external_id": None,
        "attributes": None,
    }
    assert doc["states"][0]["catch"][0]["kinds"] == ["expired"]
    assert doc["states"][2]["failure"] == "expired"
    assert doc["result"] == {"verdict": "kept"}


def test_a_race_needs_two_awaited_children() -> None:
    alone = _parent(children=[Child("c", label="y")], await_first=True)
    assert "RACE_WITHOUT_CHILDREN" in [p.code for p in validate.problems(alone)]
    pair = _parent(children=[Child("c", label="y"), Child("d", label="z")], await_first=True)
    assert "RACE_WITHOUT_CHILDREN" not in [p.code for p in validate.problems(pair)]
