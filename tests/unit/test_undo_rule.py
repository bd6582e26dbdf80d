"""Which state change may be undone, and what undoing it returns to (pure)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskflow.core.access.principals import Principal
from taskflow.core.definition import Move, Slot, State, Undoable, define, who
from taskflow.core.history import undo
from taskflow.core.history.visits import ENTERED, Line
from tests.conftest import T0

WINDOW = Undoable(within=timedelta(minutes=10), same_actor=True)
DEFINITION = define(
    "claims",
    tracks="claim",
    states={
        "draft": State(
            initial=True,
            slots=[Slot("write", waits_for="written")],
            then="review",
            undoable=Undoable(),
            moves=[
                Move("fast", to="legal", undoable=WINDOW),
                Move("plain", to="legal"),
                Move("boss", to="legal", undoable=Undoable(by=who.role("boss"))),
            ],
        ),
        "review": State(slots=[Slot("check", waits_for="checked")], then="legal"),
        "legal": State(terminal=True),
    },
)


def at(minutes: float) -> Any:
    return T0 + timedelta(minutes=minutes)


def line(n: int, minutes: float, kind: str = ENTERED, actor: str = "ada", **details: Any) -> Line:
    return Line(n, kind, at(minutes), actor, details)


def started() -> list[Line]:
    return [line(1, 0, state="draft", via="start")]


def moved(name: str, minutes: float = 1) -> list[Line]:
    return [
        *started(),
        line(2, minutes, "run.moved", move=name),
        line(3, minutes, state="legal", via="move"),
    ]


def ask(
    lines: list[Line], minutes: float = 2, actor: str = "ada", roles: tuple[str, ...] = ()
) -> undo.Target:
    person = Principal(id=actor, display_name=actor, roles=roles)
    return undo.target(DEFINITION, lines, actor=actor, principal=person, now=at(minutes))


def test_an_undoable_move_returns_to_the_state_before_it() -> None:
    found = ask(moved("fast"))
    assert (found.state, found.reverses, found.redo, found.left_at) == ("draft", 3, False, at(1))


def test_undoing_the_undo_is_a_redo_and_undoing_that_an_undo_again() -> None:
    undone = [*moved("fast"), line(4, 2, state="draft", via="undo", reverses=3)]
    redo = ask(undone, 3)
    assert (redo.state, redo.reverses, redo.redo) == ("legal", 4, True)
    redone = [*undone, line(5, 3, state="legal", via="undo", reverses=4)]
    again = ask(redone, 4)
    assert (again.state, again.reverses, again.redo) == ("draft", 5, True)


def test_a_completion_of_an_undoable_state_may_be_undone() -> None:
    lines = [*started(), line(2, 1, state="review", via="route")]
    assert ask(lines).state == "draft"
    onwards = [*lines, line(3, 2, state="legal", via="route")]  # review is not undoable
    with pytest.raises(undo.NotUndoable):
        ask(onwards, 3)


@pytest.mark.parametrize("via", ["timer", "step", "goto", "redirect"])
def test_what_the_system_or_an_operator_did_is_not_undoable(via: str) -> None:
    lines = [*started(), line(2, 1, state="review", via=via)]
    with pytest.raises(undo.NotUndoable) as refused:
        ask(lines)
    assert via in str(refused.value)


def test_unmarked_moves_and_fresh_runs_are_refused() -> None:
    with pytest.raises(undo.NotUndoable):
        ask(moved("plain"))
    with pytest.raises(undo.NoHistory):
        ask(started())


@pytest.mark.parametrize("kind", ["child.started", "run.child_started", "link.used"])
def test_nothing_is_undone_once_it_reached_beyond_the_run(kind: str) -> None:
    with pytest.raises(undo.NotUndoable) as refused:
        ask([*moved("fast"), line(9, 1.5, kind)])
    assert refused.value.reason == kind


def test_the_window_and_the_actor() -> None:
    assert ask(moved("fast"), 11).reverses == 3  # until exactly ten minutes after
    with pytest.raises(undo.UndoWindowExpired) as late:
        ask(moved("fast"), 11.01)
    assert late.value.until == at(11)
    with pytest.raises(undo.NotSameActor) as other:
        ask(moved("fast"), actor="bob")
    assert other.value.actor == "ada"


def test_who_may_undo_is_an_audience() -> None:
    with pytest.raises(undo.NotUndoable):
        ask(moved("boss"), actor="bob")
    assert ask(moved("boss"), actor="bob", roles=("boss",)).state == "draft"
