"""The operator's hand on a run, pure: goto, clocks by hand, and the unmatched-route mark."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskflow.core.runs import operator, refusals
from taskflow.core.runs.model import Outcome
from tests.unit.test_engine import NOW, Unrouted, unrouted_done, unrouted_subject


def _goto(outcome: Outcome, target: str, new_id: Any) -> Outcome:
    """Lee sends ``outcome``'s run to ``target`` now."""
    return operator.goto(
        Unrouted.definition,
        outcome.run,
        [],
        target=target,
        reason="r",
        now=NOW,
        actor="lee",
        new_id=new_id,
    )


def test_a_route_matching_nothing_marks_the_run_until_it_enters_another_state() -> None:
    done, new_id = unrouted_done()
    assert done.run.unmatched_at == NOW
    # Checked again later, the mark keeps its first instant.
    again = unrouted_subject(done, {"other": 1}, new_id)
    assert again.run.unmatched_at == NOW
    moved = operator.goto(
        Unrouted.definition,
        again.run,
        [*done.changed],
        target="small",
        reason="it is small",
        now=NOW + timedelta(hours=2),
        actor="lee",
        new_id=new_id,
    )
    assert (moved.run.state, moved.run.status, moved.run.unmatched_at) == (
        "small",
        "completed",
        None,
    )
    goto_line = next(a for a in moved.audit if a.kind == "run.goto")
    assert (goto_line.actor, goto_line.reason) == ("lee", "it is small")


def test_goto_refuses_an_unknown_state_and_an_ended_run() -> None:
    done, new_id = unrouted_done()
    with pytest.raises(refusals.MoveNotAllowed):
        _goto(done, "nowhere", new_id)
    ended = _goto(done, "big", new_id)
    with pytest.raises(refusals.RunNotActive):
        _goto(ended, "small", new_id)
