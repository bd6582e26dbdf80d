"""The worker's screen over many automations: for every event it names exactly the
automations that do not skip it (as asking each in turn would), filing those with a
``field == literal`` condition under the literal."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from taskflow.core.automations import decide as d
from taskflow.core.automations import document
from taskflow.core.automations.document import Automation
from taskflow.core.automations.screen import Screen

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
MISSING = object()
#: Literals and field values of every JSON kind that compare in surprising ways.
LITERALS: list[Any] = ["P1", "1", 1, 1.0, 2, True, False, 0]
VALUES: list[Any] = [*LITERALS, None, MISSING, [1], {"a": 1}, 1.5]


def rule(conditions: list[Any], **trigger: str) -> Automation:
    got = document.read(
        {
            "name": "r",
            "trigger": {"on": "run.state_entered", **trigger},
            "conditions": conditions,
            "actions": [{"do": "comment", "text": "x"}],
        }
    )
    assert isinstance(got, Automation), got
    return got


def eq(literal: Any, *, reverse: bool = False, field: str = "subject.p") -> dict[str, Any]:
    args = [{"ref": field}, {"lit": literal}]
    return {"op": "==", "args": args[::-1] if reverse else args}


def event(value: Any, *, depth: int = 0, state: str = "open") -> d.Event:
    subject = {} if value is MISSING else {"p": value, "q": 5}
    facts = {"state": state}
    return d.Event("1", "run.state_entered", T0, "r", "s", subject, facts, "u", depth)


def naive(rules: list[tuple[str, Automation]], ev: d.Event) -> list[str]:
    env = d.env_of(ev)
    return [key for key, r in rules if not d.skips(r, ev, env)]


def _rules() -> list[tuple[str, Automation]]:
    found: list[tuple[str, Automation]] = []
    for n, literal in enumerate(LITERALS):
        found.append((f"eq{n}", rule([eq(literal)])))
        found.append((f"rev{n}", rule([eq(literal, reverse=True)])))
        found.append(
            (
                f"and{n}",
                rule([{"op": ">", "args": [{"ref": "subject.q"}, {"lit": 1}]}, eq(literal)]),
            )
        )
        found.append((f"other{n}", rule([eq(literal, field="subject.q")])))
        found.append((f"slot{n}", rule([eq(literal)], state="open")))
    found.append(("ne", rule([{"op": "!=", "args": [{"ref": "subject.p"}, {"lit": "P1"}]}])))
    found.append(("none", rule([])))
    found.append(("list", rule([{"op": "==", "args": [{"ref": "subject.p"}, {"lit": [1]}]}])))
    return found


@pytest.mark.parametrize(("value", "depth"), list(itertools.product(VALUES, (0, d.MAX_DEPTH))))
def test_the_screen_names_exactly_the_automations_that_do_not_skip(value: Any, depth: int) -> None:
    rules = _rules()
    screen = Screen(rules)
    for state in ("open", "closed"):
        ev = event(value, depth=depth, state=state)
        assert screen.candidates(ev) == naive(rules, ev), (value, depth, state)


def test_a_document_that_no_longer_reads_is_always_a_candidate() -> None:
    screen: Screen[str] = Screen([("bad", None), ("eq", rule([eq("P1")]))])
    assert screen.candidates(event("P2")) == ["bad"]
    assert screen.candidates(event("P1")) == ["bad", "eq"]
