"""Automatic steps on a real ``taskflow serve`` (its in-process worker on the embedded
database), over HTTP: a run whose action succeeds, one whose error is final and routed to a
person, and one that fails every attempt, parks, is listed as needing attention and is
retried by an operator."""

from __future__ import annotations

import json
from typing import Any

from taskflow.config import config
from tests.acceptance.conftest import Deployment, wait_until
from tests.conftest import example_people

WORKFLOWS = config.PROJECT_ROOT / "tests" / "integration" / "step_workflows.py"
START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on StartRunSuccess { run { id } } ... on Refusal { code message } } }"""
RUN = """query($id: ID!) { run(id: $id) { state status
  steps { id status attemptCount attempts { outcome errorClass } } } }"""
ATTENTION = """{ needsAttention(first: 50, filter: {reasons: [STEP_PARKED]}) {
  totalCount edges { node { reason runId detail } } } }"""
RETRY = """mutation($id: ID!) { retryStep(input: {stepId: $id}) {
  __typename ... on RetryStepSuccess { step { status } } ... on Refusal { code } } }"""


def _post(deployment: Deployment, token: str, query: str, variables: dict[str, Any]) -> Any:
    return deployment.data(token, query, **variables)


def test_steps_run_on_a_real_server_and_a_parked_one_is_retried(deployment: Deployment) -> None:
    deployment.env.update(
        {
            "TASKFLOW_WORKFLOWS": f"{config.PROJECT_ROOT / 'examples'},{WORKFLOWS}",
            "PYTHONPATH": str(config.PROJECT_ROOT),
        }
    )
    people = deployment.data_dir.parent / "people.json"
    people.write_text(json.dumps(example_people(app_everywhere=True)))
    assert deployment.run("principals", "load", str(people)).returncode == 0
    app = deployment.run("token", "app", "--ttl", "1h").stdout.strip()
    ada = deployment.run("token", "ada", "--ttl", "1h").stdout.strip()
    server = deployment.serve()
    try:

        def start(external_id: str, plan: list[str]) -> str:
            data = _post(
                deployment,
                app,
                START,
                {
                    "input": {
                        "workflow": "quick",
                        "subject": {
                            "type": "order",
                            "externalId": external_id,
                            "attributes": {"plan": plan, "amount": 1},
                        },
                    }
                },
            )
            return str(data["startRun"]["run"]["id"])

        ok, declined, broken = (
            start("A-1", ["ok"]),
            start("A-2", ["declined"]),
            start("A-3", ["boom"]),
        )

        def run(run_id: str) -> dict[str, Any]:
            found: dict[str, Any] = _post(deployment, ada, RUN, {"id": run_id})["run"]
            return found

        def settled() -> bool:
            return (
                run(ok)["state"] == "charged"
                and run(declined)["state"] == "declined"
                and [s["status"] for s in run(broken)["steps"]] == ["PARKED"]
            )

        wait_until(settled, 60, "the steps to settle")
        [step] = run(broken)["steps"]
        assert step["attemptCount"] == 2
        assert [a["errorClass"] for a in step["attempts"]] == ["Flaky", "Flaky"]
        assert run(declined)["steps"][0]["attemptCount"] == 1  # final: not retried
        listed = _post(deployment, ada, ATTENTION, {})["needsAttention"]
        assert [e["node"]["runId"] for e in listed["edges"]] == [broken]

        retried = _post(deployment, ada, RETRY, {"id": step["id"]})["retryStep"]
        assert retried["__typename"] == "RetryStepSuccess"
        wait_until(
            lambda: (
                run(broken)["steps"][0]["attemptCount"] == 4
                and run(broken)["steps"][0]["status"] == "PARKED"
            ),
            60,
            "the retried step to run twice more",
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
