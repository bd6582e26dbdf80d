"""``taskflow check`` on workflow files with automatic-step mistakes: each a typed problem
naming the workflow, the state and the fix, exit 1 (docs/automatic-steps.md, "Validation")."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow.cli import main

HEAD = """
from datetime import timedelta
from taskflow import Fixed, Slot, State, Workflow, every, real, who

async def act(ctx):
    return {"ok": True}

def not_async(ctx):
    return {"ok": True}

class Broken(Workflow):
    name = "broken"
    tracks = "order"
"""

CASES = {
    "no way out": (
        "    go = State(initial=True, action=act)\n",
        "NO_SUCCESS_ROUTE",
        "add on_success=['<state>']",
    ),
    "action does not import": (
        "    go = State(initial=True, action='nowhere.at_all:post', on_success=['done'])\n",
        "ACTION_NOT_FOUND",
        "module 'nowhere.at_all' does not import",
    ),
    "no such function": (
        "    go = State(initial=True, action='json:no_such_function', on_success=['done'])\n",
        "ACTION_NOT_FOUND",
        "module 'json' has no 'no_such_function'",
    ),
    "not async": (
        "    go = State(initial=True, action=not_async, on_success=['done'])\n",
        "ACTION_NOT_ASYNC",
        "the action 'not_async' is not an async function",
    ),
    "retry where nothing is scheduled": (
        "    go = State(initial=True, slots=[Slot('a', candidates=who.role('finance'))],\n"
        "               retry=Fixed(wait=timedelta(seconds=1)), then=['done'])\n",
        "RETRY_WITHOUT_ACTION",
        "add action='package.module:function', or drop them",
    ),
    "every until not longer": (
        "    go = State(initial=True, slots=[Slot('a', candidates=who.role('finance'))],\n"
        "               every=[every(real.hours(24), action=act, until=real.days(1))],\n"
        "               then=['done'])\n",
        "BAD_EVERY",
        "make until strictly longer than the interval",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_check_names_the_workflow_the_state_and_the_fix(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state, code, says = CASES[case]
    path = tmp_path / "broken.py"
    path.write_text(HEAD + state + "    done = State(terminal=True)\n")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    [line] = [line for line in err.splitlines() if f"[{code}]" in line]
    assert line.startswith("error  workflow 'broken', state 'go'"), line
    assert says in line
    assert "Fix: " in line
    # One problem, one line: an automatic state without routes is not also NO_WAY_OUT
    # (whose fix, then=[...], an automatic state may not take).
    assert "NO_WAY_OUT" not in err
    assert "taskflow_workflows_" not in err  # a function is named as written, not by its module
