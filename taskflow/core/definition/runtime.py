"""The questions the engine asks of a definition, as pure functions.

The engine owns runs and slots; this module only reads the definition:
which slots a state opens (foreach, armed), which may open now (after),
whether the state is done, where the run goes, and which moves it may make.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import labels
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.model import Completion, Move, Precondition, Slot, State


def foreach_items(slot: Slot, subject: Mapping[str, Any]) -> list[Any] | None:
    """The elements a foreach slot expands over; None for a plain slot.

    A missing collection, or a value that is not a list, expands to no slots.
    """
    if slot.foreach_expr is None:
        return None
    value = ex.value_of(slot.foreach_expr, ex.Env(subject=subject))
    return list(value) if isinstance(value, list | tuple) else []


def is_armed(slot: Slot, env: ex.Env) -> bool:
    """True when the slot should exist at all (no ``armed`` condition, or it holds)."""
    return ex.matches(slot.armed, env)


def may_open(slot: Slot, satisfied: Collection[str]) -> bool:
    """True when every sibling named in ``after`` is satisfied (else the slot stays pending).

    For a foreach sibling, pass its name only once all its elements are satisfied.
    """
    return all(name in satisfied for name in slot.after)


def completion_met(
    completion: Completion, satisfied: int, live: int, env: ex.Env, expired: int = 0
) -> bool:
    """Whether a state is done.

    ``satisfied`` counts satisfied slots, ``live`` every slot that exists in
    this visit and is not cancelled (pending, open, claimed, satisfied or
    expired; disarmed slots do not count). A state with no live slots is done under
    ``all`` and waits forever under ``any`` and ``count``. An expired slot is never
    done work, but once every slot has closed (satisfied or ``expired`` of them expired)
    nothing more can come: the state is done whatever its rule, and its routes read
    ``expired.<slot>`` to say where the run goes.
    """
    if expired and satisfied + expired >= live:
        return True
    if completion.kind == "when":
        return ex.matches(completion.when, env)
    if completion.kind == "any":
        return satisfied >= 1
    if completion.kind == "count":
        return satisfied >= completion.count
    return satisfied >= live


def choose_route(state: State, env: ex.Env) -> str | None:
    """The target of the first route whose condition is true; None when none matches."""
    for route in state.routes:
        if ex.matches(route.when, env):
            return route.to
    return None


@dataclass(frozen=True)
class CheckItem:
    """One line of a checklist: a precondition's name and its three-valued result."""

    name: str
    holds: bool | None
    condition: str


def checklist(preconditions: tuple[Precondition, ...], env: ex.Env) -> tuple[CheckItem, ...]:
    """The live checklist for a board card or a move."""
    return tuple(
        CheckItem(p.name, ex.evaluate(p.when, env), ex.describe(p.when)) for p in preconditions
    )


@dataclass(frozen=True)
class MoveCheck:
    """Whether a move may be made now, and why not."""

    move: Move
    guard: bool | None
    checklist: tuple[CheckItem, ...]

    @property
    def allowed(self) -> bool:
        """True when the guard and every precondition are definitely true."""
        return self.guard is True and all(c.holds is True for c in self.checklist)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Human reasons the move is refused (empty when allowed)."""
        found = []
        if self.guard is not True:
            state = "unknown" if self.guard is None else "false"
            found.append(f"guard {ex.describe(self.move.guard)} is {state}")
        found += [f"{c.name!r} is not met" for c in self.checklist if c.holds is not True]
        return tuple(found)


def check_move(state: State, move: Move, env: ex.Env) -> MoveCheck:
    """Evaluate a move's guard and its preconditions (the state's, then its own).

    Who may make it (``move.by``) is a separate question for
    :func:`taskflow.core.definition.audience.matches`.
    """
    items = checklist((*state.preconditions, *move.preconditions), env)
    return MoveCheck(move, ex.evaluate(move.guard, env), items)


def subject_paths(slot: Slot) -> dict[str, frozenset[str]]:
    """The subject fields each part of a slot reads, for ``updateSubject``.

    Keys: ``milestones`` (budgets to recompute), ``priority``, ``label``,
    ``candidates``, ``delegates``, ``armed``, ``foreach``. A part that reads
    no subject field is absent.
    """
    budgets = [m.within for m in slot.milestones]
    found = {
        "milestones": frozenset().union(
            *(exd.paths(b.key, "subject") for b in budgets if isinstance(b, bu.BudgetTable))
        ),
        "priority": exd.paths(slot.priority_rule.key, "subject"),
        "label": frozenset(
            r.dotted
            for r in labels.refs(slot.label or "")
            if isinstance(r, ex.Ref) and r.root == "subject"
        ),
        "candidates": _who_paths(slot.candidates),
        "delegates": _who_paths(slot.delegates),
        "armed": exd.paths(slot.armed, "subject"),
        "foreach": exd.paths(slot.foreach_expr, "subject"),
    }
    return {part: paths for part, paths in found.items() if paths}


def _who_paths(w: au.Who | None) -> frozenset[str]:
    return frozenset(r.dotted for r in au.refs(w) if r.root == "subject") if w else frozenset()
