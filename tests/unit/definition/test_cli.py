"""``taskflow check | graph | show``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from taskflow.cli import main
from taskflow.config import config
from tests.unit.definition.conftest import RefusedCheck

EXAMPLES = str(config.PROJECT_ROOT / "examples")


def bad_finished_milestone(options: str) -> str:
    """A workflow file: one slot, a finished milestone of two business hours with ``options``."""
    return (
        "from taskflow import Route, Slot, State, Workflow, business, milestone, who\n"
        "class Bad(Workflow):\n"
        "    tracks = 'x'\n"
        "    calendar = 'uk-london'\n"
        "    start = State(initial=True, then=[Route('end')], slots=[Slot('s',\n"
        "        candidates=who.role('r'), milestones=[milestone.finished(\n"
        f"            within=business.hours(2), {options})])])\n"
        "    end = State(terminal=True)\n"
    )


def test_check_prints_one_line_per_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLES]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines] == [
        "accounts-closure@1",
        "accounts-request@1",
        "badge-request@1",
        "badge-revocation@1",
        "employee-onboarding@1",
        "expense-approval@1",
        "laptop-request@1",
        "laptop-return@1",
        "security-assessment@1",
        "support-ticket@1",
        "vendor-onboarding@2",
    ]
    assert all(line.startswith("ok ") and "sha256:" in line for line in lines)


def test_check_reports_every_problem_and_fails(refused_check: RefusedCheck) -> None:
    err = refused_check(
        "from taskflow import State, Workflow\n"
        "class Bad(Workflow):\n"
        "    tracks = 'x'\n"
        "    calendar = 'mars'\n"
        "    start = State(initial=True, then='nowhere')\n",
    )
    assert "UNKNOWN_CALENDAR" in err
    assert "UNKNOWN_STATE" in err
    assert "Fix: use one of the known calendars" in err
    assert err.rstrip().endswith("2 problems found.")


def test_graph_prints_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "support-ticket", "--path", EXAMPLES]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stateDiagram-v2")
    assert "open --> waiting_for_customer: move ask_customer" in out


def test_show_prints_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "expense-approval", "--path", EXAMPLES]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "expense-approval"
    assert doc["digest"].startswith("sha256:")


def test_unknown_workflow_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "expenses", "--path", EXAMPLES]) == 1
    assert "No workflow is called 'expenses'" in capsys.readouterr().err


def test_check_examples_as_a_real_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "taskflow", "check", "examples/"],
        cwd=config.PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\nok ") + done.stdout.startswith("ok ") == 11


@pytest.mark.parametrize(
    ("option", "code", "words"),
    [
        ("holder_leave='nap'", "BAD_HOLDER_LEAVE", "unknown holder_leave 'nap'"),
        ("region_from='office'", "BAD_REGION_FROM", "region_from 'office' on the finished"),
        ("regions={'DE-BY': 'bavaria'}", "UNKNOWN_CALENDAR", "bavaria"),
    ],
)
def test_check_refuses_bad_leave_and_region_options(
    refused_check: RefusedCheck, option: str, code: str, words: str
) -> None:
    err = refused_check(
        bad_finished_milestone(f"chain=('region',), {option}"),
    )
    assert code in err, err
    assert words in err, err


def test_check_refuses_an_unknown_recompute_policy(refused_check: RefusedCheck) -> None:
    err = refused_check(
        bad_finished_milestone("recompute='later'"),
    )
    assert "BAD_RECOMPUTE" in err
    assert "unknown recompute policy 'later' on the finished milestone" in err
    assert "use recompute='keep-elapsed', 'restart' or 'retroactive'" in err
