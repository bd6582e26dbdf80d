"""Load-time checks of child runs (docs/composition.md).

:func:`problems` checks one definition: every label a literal name, unique in the
definition; a state that awaits children has no slots and no action, and a terminal
state starts none; catch targets
exist; ``failure`` only on terminal states. :func:`set_problems` checks the loaded set:
every child workflow is loaded, and no workflow awaits itself through its children.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from taskflow.core.definition.checks.problems import Problem

if TYPE_CHECKING:
    from taskflow.core.definition.workflow import Definition

_LABEL: Final = re.compile(r"^[a-z][a-z0-9_-]*$")


def _problem(d: Definition, where: str, code: str, message: str, fix: str) -> Problem:
    return Problem(code, d.name, where, message, fix, d.source)


def problems(d: Definition) -> list[Problem]:
    """What is wrong with the children, catches and failures of ``d`` on its own."""
    found: list[Problem] = []
    seen: dict[str, str] = {}
    for st in d.states:
        where = f"state {st.name!r}"
        for c in st.children:
            cwhere = f"{where} / child {c.label!r}"
            if not isinstance(c.label, str) or not _LABEL.match(c.label):
                found.append(
                    _problem(
                        d,
                        cwhere,
                        "BAD_CHILD_LABEL",
                        f"the label {c.label!r} is not a literal name",
                        "write a lower-case word, e.g. label='assessment'",
                    )
                )
            elif c.label in seen:
                found.append(
                    _problem(
                        d,
                        cwhere,
                        "DUPLICATE_CHILD_LABEL",
                        f"the label {c.label!r} is also used in {seen[c.label]}",
                        "give each child of the workflow its own label",
                    )
                )
            seen.setdefault(str(c.label), where)
        if (st.awaits and (st.slots or st.action is not None)) or (st.children and st.terminal):
            found.append(
                _problem(
                    d,
                    where,
                    "AWAIT_WITH_WORK",
                    "a state that awaits children also has slots or an action, or a terminal "
                    "state starts children (it would never start them)",
                    "await children in a state of their own, then route to the work",
                )
            )
        for k in st.catch:
            if not d.has_state(k.to):
                found.append(
                    _problem(
                        d,
                        where,
                        "UNKNOWN_STATE",
                        f"catch goes to unknown state {k.to!r}",
                        "name a declared state",
                    )
                )
        if st.await_first and len(st.awaits) < 2:
            found.append(
                _problem(
                    d,
                    where,
                    "RACE_WITHOUT_CHILDREN",
                    "await_first needs two awaited children or more to race",
                    "await two children or more here, or drop await_first",
                )
            )
        if st.catch and not st.awaits:
            found.append(
                _problem(
                    d,
                    where,
                    "CATCH_WITHOUT_CHILD",
                    "the state catches but awaits no child",
                    "await a child here (children=[Child(...)]) or drop catch",
                )
            )
        if st.failure not in (None, False) and not st.terminal:
            found.append(
                _problem(
                    d,
                    where,
                    "FAILURE_NOT_TERMINAL",
                    "failure is declared on a state that is not terminal",
                    "mark it terminal=True, or drop failure",
                )
            )
    return found


def _awaited(d: Definition) -> set[str]:
    return {c.workflow for st in d.states for c in st.children if c.awaited}


def set_problems(definitions: Sequence[Definition]) -> list[Problem]:
    """What is wrong across the loaded set: unknown child workflows, cycles of awaits."""
    found: list[Problem] = []
    names = {d.name for d in definitions}
    edges: dict[str, set[str]] = {}
    for d in definitions:
        edges.setdefault(d.name, set()).update(_awaited(d))
        for st in d.states:
            for c in st.children:
                for workflow in (c.workflow, c.compensation):
                    if workflow is not None and workflow not in names:
                        found.append(
                            _problem(
                                d,
                                f"state {st.name!r} / child {c.label!r}",
                                "UNKNOWN_WORKFLOW",
                                f"no loaded workflow is called {workflow!r}",
                                f"load it (TASKFLOW_WORKFLOWS) or use one of {sorted(names)}",
                            )
                        )
    reported: set[str] = set()
    for d in definitions:
        cycle = _cycle(d.name, edges)
        if cycle and d.name not in reported:
            reported.update(cycle)
            found.append(
                _problem(
                    d,
                    "",
                    "CHILD_CYCLE",
                    "the workflow awaits itself through its children: " + " -> ".join(cycle),
                    "break the cycle: start one of them bare (awaited=False), or not at all",
                )
            )
    return found


def _cycle(start: str, edges: dict[str, set[str]]) -> list[str]:
    """A path of awaits from ``start`` back to it ([] when none)."""
    todo: list[list[str]] = [[start]]
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        for nxt in sorted(edges.get(path[-1], ())):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                todo.append([*path, nxt])
    return []
