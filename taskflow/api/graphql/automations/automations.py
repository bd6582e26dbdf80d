"""Automations in GraphQL: ``automations`` (the list of a workflow's), and the verbs
``createAutomation``, ``validateAutomation``, ``publishAutomation``, ``pauseAutomation``,
``resumeAutomation``, ``simulateAutomation`` (docs/automations.md).

Each verb runs its use case (``service/automations``, ``@retry.retried``) through
``keyed.mutation`` and answers a payload union of its success and the common typed
refusals. ``validateAutomation`` and ``simulateAutomation`` change nothing, but take
an idempotency key all the same (every mutation does: a retry gets the first answer).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.automations.automation_types import (
    TYPE_NAME,
    Automation,
    AutomationProblem,
    SimulatedEvent,
)
from taskflow.api.graphql.common import keyed, relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.refused import Refusal, refusal
from taskflow.core.access.principals import Principal
from taskflow.core.automations import simulate as sim
from taskflow.core.common import refusals as core
from taskflow.service.automations import automations

#: At most this many matched events are listed in a simulation's answer (all are counted).
MAX_LISTED = 200


@strawberry.input(description="A new draft automation of a workflow.")
class CreateAutomationInput:
    workflow: str = strawberry.field(description="The workflow whose events it listens to.")
    document: JSON = strawberry.field(description="The rule (docs/automations.md).")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="A document to check, or to play over recorded events.")
class AutomationDocumentInput:
    workflow: str = strawberry.field(description="The workflow it is for.")
    document: JSON = strawberry.field(description="The rule (docs/automations.md).")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.input(description="A document to play over the workflow's last days of events.")
class SimulateAutomationInput(AutomationDocumentInput):
    days: int = strawberry.field(default=30, description="How many days back (1 to 90).")


@strawberry.input(description="One automation, by its global id.")
class AutomationInput:
    automation_id: strawberry.ID = strawberry.field(description="The automation's global id.")
    idempotency_key: str | None = relay.idempotency_key_field()

    def local_id(self) -> str:
        return relay.local_id(str(self.automation_id), TYPE_NAME, "automationId")


@strawberry.type(description="The automation as it stands after the change.")
class AutomationSuccess:
    automation: Automation = strawberry.field(description="The automation.")


@strawberry.type(description="Every problem of the document; none: it may be saved and published.")
class AutomationValidation:
    valid: bool = strawberry.field(description="True when there is no problem.")
    problems: list[AutomationProblem] = strawberry.field(description="Every problem found.")


@strawberry.type(description="What the rule would have done over recorded events; nothing done.")
class AutomationSimulation:
    events_read: int = strawberry.field(description="Recorded events played through the rule.")
    capped: str = strawberry.field(description="Why it stopped early; empty when it did not.")
    would_act: int = strawberry.field(description="How many events it would have acted on.")
    matched: int = strawberry.field(description="How many events matched its trigger.")
    events: list[SimulatedEvent] = strawberry.field(
        description=f"The matched events, oldest first (the first {MAX_LISTED})."
    )


def _problems(e: errors.TaskflowError) -> dict[str, object]:
    return {"problems": [relay.copied(AutomationProblem, p) for p in e.facts["problems"]]}


@refusal(core.AutomationInvalid, facts=_problems)
class AutomationInvalid(Refusal):
    """The automation document has problems; nothing was saved. The message names each too
    (as the INVALID_INPUT answered before this type did)."""

    problems: list[AutomationProblem] = strawberry.field(
        description="Every problem, by JSON pointer into the document."
    )


AutomationPayload = Annotated[
    AutomationSuccess | AutomationInvalid | relay.Common,
    strawberry.union(
        "AutomationPayload",
        description="Result of createAutomation, publishAutomation, pauseAutomation, "
        "resumeAutomation.",
    ),
]
ValidateAutomationPayload = Annotated[
    AutomationValidation | relay.Common,
    strawberry.union("ValidateAutomationPayload", description="Result of validateAutomation."),
]


@strawberry.type(
    description="The automation is gone, with its decisions; the timeline keeps the lines it wrote."
)
class AutomationDeleted:
    automation_id: strawberry.ID = strawberry.field(description="The removed automation's id.")


DeleteAutomationPayload = Annotated[
    AutomationDeleted | relay.Common,
    strawberry.union("DeleteAutomationPayload", description="Result of deleteAutomation."),
]
SimulateAutomationPayload = Annotated[
    AutomationSimulation | AutomationInvalid | relay.Common,
    strawberry.union("SimulateAutomationPayload", description="Result of simulateAutomation."),
]


async def automation_success(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> AutomationSuccess:
    row = await automations.get(info.context.services, me, str(answer["automation"]))
    if row is None:
        raise errors.NotFound("The automation is gone.")
    return AutomationSuccess(automation=Automation.of(row))


# The answers of validate and simulate are plain JSON: under an idempotency key they are
# stored and given again as they were.


async def validation(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> AutomationValidation:
    problems = [AutomationProblem(**p) for p in answer["problems"]]
    return AutomationValidation(valid=not problems, problems=problems)


def _simulated(found: sim.Simulation) -> keyed.Answer:
    return {
        "events_read": found.events_read,
        "capped": found.capped,
        "would_act": len(found.would_act),
        "matched": len(found.steps),
        "events": [SimulatedEvent.plain(s) for s in found.steps[:MAX_LISTED]],
    }


async def simulation(
    info: Info, me: Principal, answer: keyed.Answer, _: bool
) -> AutomationSimulation:
    found = answer["simulation"]
    return AutomationSimulation(
        **{k: v for k, v in found.items() if k != "events"},
        events=[SimulatedEvent.of(e) for e in found["events"]],
    )


async def deleted(info: Info, me: Principal, answer: keyed.Answer, _: bool) -> AutomationDeleted:
    return AutomationDeleted(automation_id=relay.node_id(TYPE_NAME, str(answer["automation"])))


@strawberry.type
class AutomationMutations:
    @keyed.mutation(AutomationPayload, automation_success)
    async def create_automation(
        self, info: Info, me: Principal, input: CreateAutomationInput
    ) -> keyed.Answer:
        """Save a draft automation of a workflow you lead (granted whole); a document with
        problems is refused (AutomationInvalid: each by JSON pointer) and nothing is saved."""
        services = info.context.services
        return {
            "automation": await automations.create(services, me, input.workflow, input.document)
        }

    @keyed.mutation(ValidateAutomationPayload, validation)
    async def validate_automation(
        self, info: Info, me: Principal, input: AutomationDocumentInput
    ) -> keyed.Answer:
        """Every problem of an automation document, by JSON pointer; saves nothing."""
        services = info.context.services
        found = await automations.validate(services, me, input.workflow, input.document)
        return {"problems": [dataclasses.asdict(p) for p in found]}

    @keyed.mutation(AutomationPayload, automation_success)
    async def publish_automation(
        self, info: Info, me: Principal, input: AutomationInput
    ) -> keyed.Answer:
        """Publish the automation as its next version: from now on it acts on events."""
        return await _moved(info, me, input, "publish")

    @keyed.mutation(AutomationPayload, automation_success)
    async def pause_automation(
        self, info: Info, me: Principal, input: AutomationInput
    ) -> keyed.Answer:
        """Stop a published automation acting (resumeAutomation starts it again)."""
        return await _moved(info, me, input, "pause")

    @keyed.mutation(AutomationPayload, automation_success)
    async def resume_automation(
        self, info: Info, me: Principal, input: AutomationInput
    ) -> keyed.Answer:
        """Let a paused automation act again, on the same version."""
        return await _moved(info, me, input, "resume")

    @keyed.mutation(DeleteAutomationPayload, deleted)
    async def delete_automation(
        self, info: Info, me: Principal, input: AutomationInput
    ) -> keyed.Answer:
        """Delete an automation (any status) with its decisions; what it did stays on the
        runs' timelines."""
        local = input.local_id()
        return {"automation": await automations.delete(info.context.services, me, local)}

    @keyed.mutation(SimulateAutomationPayload, simulation)
    async def simulate_automation(
        self, info: Info, me: Principal, input: SimulateAutomationInput
    ) -> keyed.Answer:
        """What a document would have done over the workflow's recorded events of the last
        days (capped), doing nothing."""
        services = info.context.services
        found = await automations.simulate(services, me, input.workflow, input.document, input.days)
        return {"simulation": _simulated(found)}


async def _moved(info: Info, me: Principal, input: AutomationInput, verb: str) -> keyed.Answer:
    local = input.local_id()
    await automations.move(info.context.services, me, local, verb)
    return {"automation": local}


@strawberry.type(description="Automations.")
class AutomationQueries:
    @strawberry.field(
        description="The automations of a workflow, oldest first: its leads (granted it whole) "
        "and admins; others are refused (FORBIDDEN)."
    )
    async def automations(
        self,
        info: Info,
        workflow: Annotated[str, strawberry.argument(description="The workflow.")],
    ) -> list[Automation]:
        me = await caller(info)
        rows = await automations.of_workflow(info.context.services, me, workflow)
        return [Automation.of(r) for r in rows]
