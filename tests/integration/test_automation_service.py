"""Managing automations: leads of the workflow only, bad documents refused by pointer,
publish in versions, pause and resume."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskflow import errors
from taskflow.config import config
from taskflow.core.access import principals
from taskflow.core.common import refusals
from taskflow.service.automations import automations
from taskflow.service.common.container import Services
from tests.api.workflows import TICKET
from tests.integration.starting import app_starts

pytestmark = pytest.mark.anyio
WORKFLOW = "support-ticket"
EXAMPLE = config.PROJECT_ROOT / "examples" / "automations" / "escalate_p1_automation.json"


def person(pid: str, **data: object) -> principals.Principal:
    return principals.build({"id": pid, "display_name": pid, **data})


LEAD = person("lena", powers=[{"power": "lead", "workflows": [WORKFLOW]}])
OTHER_LEAD = person("otto", powers=[{"power": "lead", "workflows": ["expense-approval"]}])
TEAM_LEAD = person(
    "tara", powers=[{"power": "lead", "workflows": [WORKFLOW], "teams": ["group:t"]}]
)
ADMIN = person("ada", roles=["admin"])


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


async def test_leads_of_the_workflow_create_publish_pause_and_resume(services: Services) -> None:
    new = await automations.create(services, LEAD, WORKFLOW, example())
    assert await automations.move(services, LEAD, new, "publish") == 1
    assert await automations.move(services, LEAD, new, "pause") == 1
    assert await automations.move(services, ADMIN, new, "resume") == 1
    assert await automations.move(services, LEAD, new, "publish") == 2
    listed = await automations.of_workflow(services, LEAD, WORKFLOW)
    assert [(r.id, r.status, r.version, r.author) for r in listed] == [
        (new, "published", 2, "lena")
    ]
    with pytest.raises(errors.ValidationError, match="published automation cannot be resumed"):
        await automations.move(services, LEAD, new, "resume")


@pytest.mark.parametrize("outsider", [OTHER_LEAD, TEAM_LEAD])
async def test_others_are_refused_and_change_nothing(
    services: Services, outsider: principals.Principal
) -> None:
    with pytest.raises(errors.Forbidden):
        await automations.create(services, outsider, WORKFLOW, example())
    new = await automations.create(services, LEAD, WORKFLOW, example())
    with pytest.raises(errors.NotFound):
        await automations.move(services, outsider, new, "publish")
    with pytest.raises(errors.Forbidden):
        await automations.of_workflow(services, outsider, WORKFLOW)
    listed = await automations.of_workflow(services, LEAD, WORKFLOW)
    assert [(r.status, r.version) for r in listed] == [("draft", 0)]


async def test_a_bad_document_is_refused_naming_its_parts(services: Services) -> None:
    bad = {**example(), "actions": [{"do": "rm -rf"}], "trigger": {"on": "nope"}}
    with pytest.raises(refusals.AutomationInvalid) as refused:
        await automations.create(services, LEAD, WORKFLOW, bad)
    assert [p["pointer"] for p in refused.value.problems or []] == [
        "/trigger/on",
        "/actions/0/do",
    ]
    with pytest.raises(errors.NotFound):
        await automations.create(services, ADMIN, "no-such-flow", example())
    assert await automations.of_workflow(services, LEAD, WORKFLOW) == []


async def test_simulate_plays_the_recorded_timeline_and_does_nothing(
    services: Services, people: dict[str, str]
) -> None:
    for ref, priority in (("T-1", "P1"), ("T-2", "P2"), ("T-3", "P1")):
        attrs = {**TICKET, "reference": ref, "priority": priority}
        await app_starts(services, WORKFLOW, ref, attrs, subject_type="ticket")
    rule = {
        **example(),
        "trigger": {"on": "slot.opened"},
        "enrollment": {"policy": "once_per_subject"},
    }
    sim = await automations.simulate(services, LEAD, WORKFLOW, rule, days=7)
    acted = [s.event for s in sim.would_act]
    assert [e.subject["reference"] for e in acted] == ["T-1", "T-3"]
    assert {e.kind for e in acted} == {"slot.opened"}
    assert sim.capped == ""
    skipped = [s.decision.reason for s in sim.steps if not s.decision.acts]
    assert any("subject.priority" in r for r in skipped)
    assert await automations.of_workflow(services, LEAD, WORKFLOW) == []
    with pytest.raises(errors.ValidationError, match="days is 1 to 90"):
        await automations.simulate(services, LEAD, WORKFLOW, rule, days=366)
    with pytest.raises(errors.Forbidden):
        await automations.simulate(services, OTHER_LEAD, WORKFLOW, rule, days=7)
