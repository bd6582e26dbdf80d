"""A definition edited in place at the same version is refused at start (real processes)."""

from __future__ import annotations

import re

import pytest

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

WORKFLOW = '''
from taskflow import Route, Slot, State, Workflow, who


class LeaveRequestV1(Workflow):
    """{doc}"""

    name = "leave-request"
    version = 1
    tracks = "leave"

    review = State(
        initial=True,
        slots=[Slot("review", label="{label}", candidates=who.role("manager"))],
        then=[Route("approved")],
    )
    approved = State(terminal=True)
'''


def test_a_drifted_definition_is_refused_at_start_unless_allowed(deployment: Deployment) -> None:
    source = deployment.data_dir.parent / "leave.py"
    deployment.env["TASKFLOW_WORKFLOWS"] = str(source)
    source.write_text(WORKFLOW.format(doc="A manager approves leave.", label="Review leave"))
    first = deployment.run("migrate")
    assert first.returncode == 0, first.stderr
    assert "workflow definitions are recorded" in first.stdout

    # Edited in place, still version 1: the next deploy is refused, by migrate and by serve.
    source.write_text(WORKFLOW.format(doc="A manager approves leave.", label="Approve leave"))
    for command in ("migrate", "serve"):
        refused = deployment.run(command)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        assert "error [DEFINITION_DRIFT]" in refused.stderr
        assert "'leave-request' version 1 changed since it was deployed" in refused.stderr
        diff = [line.strip() for line in refused.stderr.splitlines()]
        assert any(re.fullmatch(r'-\s+"label": "Review leave",', line) for line in diff)
        assert any(re.fullmatch(r'\+\s+"label": "Approve leave",', line) for line in diff)
        assert "bump the version" in refused.stderr

    listed = deployment.run("definitions")
    assert listed.returncode == 0, listed.stderr
    (line,) = [row for row in listed.stdout.splitlines() if row.startswith("leave-request")]
    assert line.split()[1] == "1"
    assert line.endswith("drifted")

    # Development: the setting lets it start, says so loudly, and records the new document.
    allowed = deployment.run_with({"TASKFLOW_ALLOW_DEFINITION_DRIFT": "true"}, "migrate")
    assert allowed.returncode == 0, allowed.stderr
    assert "DEFINITION DRIFT ALLOWED" in allowed.stderr
    again = deployment.run("migrate")
    assert again.returncode == 0, again.stderr
    listed = deployment.run("definitions")
    assert listed.stdout.splitlines()[1].endswith("loaded")


def test_a_version_with_live_runs_missing_from_the_code_is_refused(
    deployment: Deployment,
) -> None:
    seeded = deployment.run("demo", "--ttl", "1h")
    assert seeded.returncode == 0, seeded.stderr
    listed = deployment.run("definitions")
    live = {
        row.split()[0]: int(row.split()[4])
        for row in listed.stdout.splitlines()[1:]
        if row.split()[1] == "1"
    }
    assert live["expense-approval"] > 0
    plan = deployment.run("runs", "migrate", "expense-approval", "--to", "1", "--plan")
    assert plan.returncode == 0, plan.stderr
    assert "every live run is on version 1 already" in plan.stdout
    neither = deployment.run("runs", "migrate", "expense-approval", "--to", "1")
    assert neither.returncode == 1
    assert "say --plan" in neither.stderr
    apply = deployment.run("runs", "migrate", "expense-approval", "--to", "1", "--apply")
    assert apply.returncode == 1
    assert "declares no migrations" in apply.stderr

    # A deploy that dropped the expense workflow's file would strand its live runs.
    deployment.env["TASKFLOW_WORKFLOWS"] = (
        "examples/support_ticket.py,examples/vendor_onboarding.py"
    )
    for command in ("migrate", "worker"):
        refused = deployment.run(command)
        assert refused.returncode == 1, (command, refused.stderr)
        assert "error [DEFINITION_VERSION_MISSING]" in refused.stderr
        count = live["expense-approval"]
        assert f"'expense-approval' version 1: {count} live runs" in refused.stderr
