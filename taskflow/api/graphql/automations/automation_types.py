"""The GraphQL types of automations (docs/automations.md): the automation, a problem of
its document, and what a simulation found."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.workspace_type import Held
from taskflow.core.automations import simulate as sim
from taskflow.service.automations.automations import AutomationRow

TYPE_NAME = "Automation"


@strawberry.type(description="A rule a workflow's lead wrote: when, if, do (docs/automations.md).")
class Automation(Held):
    id: strawberry.ID = strawberry.field(description="Its global id.")
    workflow: str = strawberry.field(description="The workflow whose events it listens to.")
    name: str = strawberry.field(description="Its name, from the document.")
    status: str = strawberry.field(description="draft, published or paused.")
    version: int = strawberry.field(
        description="The published version (0 while a draft never published)."
    )
    document: JSON = strawberry.field(description="The document as written.")
    author: str = strawberry.field(description="Who wrote it: it acts with their powers.")
    attention: str = strawberry.field(
        description="Why it stopped acting (its author lost the grant, a loop); empty while "
        "it acts. Publishing it again clears it."
    )
    created_at: datetime = strawberry.field(description="When it was created.")
    updated_at: datetime = strawberry.field(description="When it last changed.")

    @classmethod
    def of(cls, row: AutomationRow) -> Automation:
        return relay.copied(cls, row, id=relay.node_id(TYPE_NAME, row.id))


@strawberry.type(description="One problem of an automation document.")
class AutomationProblem:
    pointer: str = strawberry.field(
        description="Where, as a JSON pointer into the document (/actions/0/to)."
    )
    code: str = strawberry.field(description="What kind of problem (unknown_trigger, missing...).")
    message: str = strawberry.field(description="What is wrong, in words.")


@strawberry.type(description="One recorded event the simulated rule matched, and its decision.")
class SimulatedEvent:
    event_kind: str = strawberry.field(description="The trigger the event is (slot.opened...).")
    occurred_at: datetime = strawberry.field(description="When it happened.")
    run_id: strawberry.ID | None = strawberry.field(description="Global id of its run.")
    outcome: str = strawberry.field(description="act, skip or loop.")
    reason: str = strawberry.field(description="Why it would not act (empty when it would).")
    actions: list[JSON] = strawberry.field(
        description="What it would have done, as the document's actions ({do: ...})."
    )

    @staticmethod
    def plain(step: sim.Step) -> dict[str, object]:
        """The event as JSON (an idempotency key stores the answer)."""
        return {
            "event_kind": step.event.kind,
            "occurred_at": step.event.at.isoformat(),
            "run_id": step.event.run_id or None,
            "outcome": step.decision.outcome,
            "reason": step.decision.reason,
            "actions": [{"do": a.verb, **a.params} for a in step.decision.actions],
        }

    @classmethod
    def of(cls, plain: dict[str, Any]) -> SimulatedEvent:
        return cls(
            event_kind=plain["event_kind"],
            occurred_at=datetime.fromisoformat(plain["occurred_at"]),
            run_id=relay.node_id("Run", plain["run_id"]),
            outcome=plain["outcome"],
            reason=plain["reason"],
            actions=[JSON(a) for a in plain["actions"]],
        )
