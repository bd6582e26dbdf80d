"""The operator's hand on a run, pure: goto, clocks by hand, and the unmatched-route mark."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskflow.core.runs import engine, operator, refusals
from tests.unit.test_engine import NOW, Unrouted, unrouted_done


def test_a_route_matching_nothing_marks_the_run_until_it_enters_another_state() -> None:
    done, new_id = unrouted_done()
    assert done.run.unmatched_at == NOW
    # Checked again later, the mark keeps its first instant.
    again = engine.change_subject(
        Unrouted.definition,
        done.run,
        [*done.changed],
        subject={"other": 1},
        now=NOW + timedelta(hours=1),
        actor="app",
        new_id=new_id,
    )
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
        operator.goto(
            Unrouted.definition,
            done.run,
            [],
            target="nowhere",
            reason="r",
            now=NOW,
            actor="lee",
            new_id=new_id,
        )
    ended = operator.goto(
        Unrouted.definition,
        done.run,
        [],
        target="big",
        reason="r",
        now=NOW,
        actor="lee",
        new_id=new_id,
    )
    with pytest.raises(refusals.RunNotActive):
        operator.goto(
            Unrouted.definition,
            ended.run,
            [],
            target="small",
            reason="r",
            now=NOW,
            actor="lee",
            new_id=new_id,
        )
