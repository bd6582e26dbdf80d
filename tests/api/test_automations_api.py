"""Automations over HTTP: the leads of a workflow list, create, validate, publish, pause,
resume and simulate its automations; everyone else is refused and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

AUTOMATION = "id workflow name status version document author"
ANSWER = f"""__typename ... on AutomationSuccess {{ automation {{ {AUTOMATION} }} }}
  ... on AutomationInvalid {{ problems {{ pointer code message }} }}
  ... on Refusal {{ code message }}"""
CREATE = f"""mutation($input: CreateAutomationInput!) {{ createAutomation(input: $input) {{
  {ANSWER} }} }}"""
VALIDATE = """mutation($input: AutomationDocumentInput!) { validateAutomation(input: $input) {
  __typename ... on AutomationValidation { valid problems { pointer code message } }
  ... on Refusal { code message } } }"""
SIMULATE = """mutation($input: SimulateAutomationInput!) { simulateAutomation(input: $input) {
  __typename ... on AutomationSimulation { eventsRead capped wouldAct matched
    events { eventKind runId outcome reason actions } }
  ... on Refusal { code message } } }"""
LIST = f"query($workflow: String!) {{ automations(workflow: $workflow) {{ {AUTOMATION} }} }}"
WORKFLOW = "expense-approval"
BIG_EXPENSES = {
    "name": "tell finance leads of big expenses",
    "trigger": {"on": "run.state_entered"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [{"do": "comment", "text": "A big one: look closely."}],
}


def moved(verb: str) -> str:
    return f"""mutation($input: AutomationInput!) {{ {verb}Automation(input: $input) {{
  {ANSWER} }} }}"""


async def call(
    client: httpx.AsyncClient, token: str, query: str, input: dict[str, Any]
) -> dict[str, Any]:
    answer: dict[str, Any] = next(
        iter((await gql(client, query, {"input": input}, token=token)).ok().values())
    )
    return answer


async def listed(client: httpx.AsyncClient, token: str) -> list[tuple[str, int]]:
    rows = (await gql(client, LIST, {"workflow": WORKFLOW}, token=token)).ok()["automations"]
    return [(r["status"], r["version"]) for r in rows]


async def test_leads_of_the_workflow_manage_its_automations_and_no_one_else(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    leah, ada = people["leah"], people["ada"]
    made = await call(client, leah, CREATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES})
    assert made["__typename"] == "AutomationSuccess"
    automation = made["automation"]
    assert (automation["status"], automation["version"], automation["author"]) == (
        "draft",
        0,
        "leah",
    )
    target = {"automationId": automation["id"]}
    published = await call(client, leah, moved("publish"), target)
    assert (published["automation"]["status"], published["automation"]["version"]) == (
        "published",
        1,
    )
    assert (await call(client, leah, moved("pause"), target))["automation"]["status"] == "paused"
    assert (await call(client, ada, moved("resume"), target))["automation"]["status"] == (
        "published"
    )
    again = await call(client, leah, moved("resume"), target)
    assert (again["code"], again["message"]) == (
        "INVALID_INPUT",
        "A published automation cannot be resumed.",
    )
    # A lead of another workflow, a team-narrowed lead, staff without grants: refused.
    for outsider in ("olga", "tara", "fiona"):
        token = people[outsider]
        refused = await call(
            client, token, CREATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES}
        )
        assert refused["code"] == "FORBIDDEN", outsider
        for verb in ("publish", "pause", "resume"):
            assert (await call(client, token, moved(verb), target))["code"] == "NOT_FOUND"
        checked = await call(client, token, VALIDATE, {"workflow": WORKFLOW, "document": {}})
        assert checked["code"] == "FORBIDDEN"
        played = await call(client, token, SIMULATE, {"workflow": WORKFLOW, "document": {}})
        assert played["code"] == "FORBIDDEN"
        assert (await gql(client, LIST, {"workflow": WORKFLOW}, token=token)).error_codes == [
            "FORBIDDEN"
        ]
    assert await listed(client, leah) == [("published", 1)]
    # An id of something else, or no id at all, is as absent as an automation never made.
    for wrong in ("nonsense", "QXV0b21hdGlvbjpub3BlCg", automation["id"][:-2]):
        answer = await call(client, leah, moved("publish"), {"automationId": wrong})
        assert answer["code"] in ("NOT_FOUND", "INVALID_INPUT"), wrong


async def test_a_bad_document_is_answered_by_pointer_and_never_saved(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    leah = people["leah"]
    bad = {**BIG_EXPENSES, "trigger": {"on": "slot.exploded"}, "actions": [{"do": "rm -rf"}]}
    checked = await call(client, leah, VALIDATE, {"workflow": WORKFLOW, "document": bad})
    assert checked["valid"] is False
    assert [(p["pointer"], p["code"]) for p in checked["problems"]] == [
        ("/trigger/on", "unknown_trigger"),
        ("/actions/0/do", "unknown_action"),
    ]
    good = await call(client, leah, VALIDATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES})
    assert (good["valid"], good["problems"]) == (True, [])
    refused = await call(client, leah, CREATE, {"workflow": WORKFLOW, "document": bad})
    # A typed refusal carrying the problems validate lists; the message names them as before.
    assert (refused["__typename"], refused["code"]) == ("AutomationInvalid", "AUTOMATION_INVALID")
    assert refused["problems"] == checked["problems"]
    assert refused["message"].startswith("The automation is not valid: /trigger/on: ")
    assert "/actions/0/do" in refused["message"]
    # The same idempotency key gives the same refusal again, problems and all.
    keyed = {"workflow": WORKFLOW, "document": bad, "idempotencyKey": "bad-doc-1"}
    first = await call(client, leah, CREATE, keyed)
    assert await call(client, leah, CREATE, keyed) == first == refused
    deep: Any = {"lit": 1}
    for _ in range(300):  # (10 000 deep: core's own tests; the client cannot encode it)
        deep = {"op": "not", "args": [deep]}
    huge = {**BIG_EXPENSES, "conditions": [deep], "actions": [{"do": "comment"}] * 10_000}
    answer = await gql(
        client, VALIDATE, {"input": {"workflow": WORKFLOW, "document": huge}}, token=leah
    )
    # Refused at the edge (too deep a value) or by pointer: never a crash, nothing saved.
    assert answer.errors or answer.ok()["validateAutomation"]["valid"] is False
    assert await listed(client, leah) == []


async def test_simulate_plays_the_recorded_days_and_does_nothing(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    leah = people["leah"]
    big = await w.start_expense(client, people["app"], "EXP-AUTO-1", amount=5000.0)
    await w.start_expense(client, people["app"], "EXP-AUTO-2", amount=20.0)
    played = await call(
        client, leah, SIMULATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES, "days": 7}
    )
    assert played["__typename"] == "AutomationSimulation"
    assert played["matched"] == 2
    assert played["wouldAct"] == 1
    assert played["capped"] == ""
    acting = [e for e in played["events"] if e["outcome"] == "act"]
    assert [(e["runId"], e["actions"]) for e in acting] == [
        (big["run"]["id"], [{"do": "comment", "text": "A big one: look closely."}])
    ]
    too_far = await call(
        client, leah, SIMULATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES, "days": 366}
    )
    assert too_far["code"] == "INVALID_INPUT"
    assert await listed(client, leah) == []


DELETE = """mutation($input: AutomationInput!) { deleteAutomation(input: $input) {
  __typename ... on AutomationDeleted { automationId } ... on Refusal { code message } } }"""


async def test_delete_removes_an_automation_for_its_leads_only(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    leah = people["leah"]
    made = await call(client, leah, CREATE, {"workflow": WORKFLOW, "document": BIG_EXPENSES})
    target = {"automationId": made["automation"]["id"]}
    await call(client, leah, moved("publish"), target)
    assert (await call(client, people["olga"], DELETE, target))["code"] == "NOT_FOUND"
    assert await listed(client, leah) == [("published", 1)]
    gone = await call(client, leah, DELETE, target)
    assert gone == {"__typename": "AutomationDeleted", "automationId": target["automationId"]}
    assert await listed(client, leah) == []
    assert (await call(client, leah, DELETE, target))["code"] == "NOT_FOUND"
    assert (await call(client, leah, moved("pause"), target))["code"] == "NOT_FOUND"
