"""``slaDryRun``: a timeline played through a definition on a scratch clock, nothing stored
(docs/sla.md, "SLA dry run"). Any signed-in caller: the subject is the caller's own input."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON

from taskflow import errors
from taskflow.api.graphql.clocks.sla import Clock
from taskflow.api.graphql.common import refusals as r
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.common.refused import Refusal, refusal
from taskflow.core.clocks import dry_run_answer as core
from taskflow.core.common import refusals
from taskflow.service.clocks import deadlines, dry_run
from taskflow.service.common.container import Services


@strawberry.input(description="One happening of a dry run's timeline (docs/sla.md).")
class DryRunEventInput:
    at: datetime = strawberry.field(description="When it happens (with an offset; in order).")
    kind: str = strawberry.field(
        description="start (first), claim, release, complete, subject, move, goto, pause, "
        "resume or end (only the horizon)."
    )
    slot: str | None = strawberry.field(default=None, description="claim/release/complete.")
    by: str | None = strawberry.field(default=None, description="Who acts (a login).")
    roles: list[str] | None = strawberry.field(default=None, description="Their roles (move).")
    groups: list[str] | None = strawberry.field(default=None, description="Their groups.")
    payload: JSON | None = strawberry.field(default=None, description="complete/move data.")
    attributes: JSON | None = strawberry.field(
        default=None, description="subject: the attributes that change."
    )
    name: str | None = strawberry.field(default=None, description="move: the move's name.")
    state: str | None = strawberry.field(default=None, description="goto: the target state.")
    reason: str | None = strawberry.field(default=None, description="For the timeline.")


@strawberry.type(description="A line of a dry run's timeline.")
class DryRunLine:
    at: datetime = strawberry.field(description="When.")
    kind: str = strawberry.field(description="clock.started, reminder.fired, clock.breached...")
    slot: str | None = strawberry.field(description="The slot's name, if any.")
    reason: str | None = strawberry.field(description="Why, in words.")
    details: JSON = strawberry.field(description="The facts of the line.")

    @classmethod
    def of(cls, line: core.Line) -> DryRunLine:
        details = cast(JSON, dry_run.to_json_value(line.details))
        return cls(at=line.at, kind=line.kind, slot=line.slot, reason=line.reason, details=details)


@strawberry.type(description="A slot's milestone clock at the end of a dry run.")
class DryRunMilestone:
    slot: str = strawberry.field(description="The slot's name.")
    visit: int = strawberry.field(description="The visit of its state (0 first).")
    clock: Clock = strawberry.field(
        description="The clock as a slot shows it, at the timeline's end: due instant, breach "
        "on record, terms, and explain (why it is due then: windows, days and holidays)."
    )


@strawberry.type(
    description="What a timeline would do: deadlines, reminders, escalations, breaches."
)
class SlaDryRun:
    workflow: str = strawberry.field(description="The workflow played.")
    version: int = strawberry.field(description="Its version.")
    started_at: datetime = strawberry.field(description="The start event's instant.")
    ended_at: datetime = strawberry.field(description="The last event's instant (the horizon).")
    state: str = strawberry.field(description="The run's state at the horizon.")
    status: str = strawberry.field(description="active, completed or cancelled.")
    firings: int = strawberry.field(description="Timers fired (each at its due instant).")
    milestones: list[DryRunMilestone] = strawberry.field(description="Every clock, by slot.")
    reminders: list[DryRunLine] = strawberry.field(description="reminder.fired lines.")
    escalations: list[DryRunLine] = strawberry.field(
        description="Escalations, reassignments, priority raises and state timeouts."
    )
    breaches: list[DryRunLine] = strawberry.field(description="clock.breached lines.")
    timeline: list[DryRunLine] = strawberry.field(description="Every line, in order.")

    @classmethod
    def of(cls, a: core.Answer, services: Services) -> SlaDryRun:
        found = _fields(a)
        for name in ("reminders", "escalations", "breaches", "timeline"):
            found[name] = [DryRunLine.of(x) for x in found[name]]
        at_risk = services.settings.sla_at_risk
        found["milestones"] = [
            DryRunMilestone(
                slot=m.slot,
                visit=m.visit,
                clock=Clock.of(deadlines.read(services.calendars, m.ledger, a.ended_at, at_risk)),
            )
            for m in a.milestones
        ]
        return cls(**found)


def _fields(value: Any) -> dict[str, Any]:
    """A core dataclass's fields by name (one level: the API types have the same names)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@refusal(refusals.DryRunTooLong)
class DryRunTooLong(Refusal):
    """The timeline is beyond a cap: too many events, too long a span or too many firings."""

    limit: str | None = strawberry.field(description="events, span_days or firings.")
    allowed: int | None = strawberry.field(description="The cap.")
    asked: int | None = strawberry.field(description="What the timeline asked for.")


@refusal(refusals.DryRunEventRefused)
class DryRunEventRefused(Refusal):
    """An event cannot happen at its point of the timeline; nothing was played further."""

    index: int | None = strawberry.field(description="The event's index in events.")
    kind: str | None = strawberry.field(description="The event's kind.")
    reason: str | None = strawberry.field(description="The refusal it met (its code).")


SlaDryRunPayload = Annotated[
    SlaDryRun | DryRunTooLong | DryRunEventRefused | relay.Common,
    strawberry.union("SlaDryRunPayload", description="Result of slaDryRun."),
]


def _event(e: DryRunEventInput) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(e).items() if v is not None}


@strawberry.type
class DryRunQueries:
    @strawberry.field(
        description="Play a timeline through a workflow's definition on a scratch clock, "
        "touching no live data: each milestone's deadline, the reminders, escalations and "
        "breaches, and the business-time walk behind each (any signed-in caller)."
    )
    async def sla_dry_run(
        self,
        info: Info,
        workflow: Annotated[str, strawberry.argument(description="The workflow's name.")],
        subject: Annotated[JSON, strawberry.argument(description="The subject's attributes.")],
        events: Annotated[
            list[DryRunEventInput],
            strawberry.argument(description="The timeline, in order; the first a start."),
        ],
        version: Annotated[
            int | None, strawberry.argument(description="A version (default: the latest).")
        ] = None,
    ) -> SlaDryRunPayload:
        await caller(info)
        services = info.context.services
        try:
            answer = dry_run.play(
                services.catalog,
                services.calendars,
                workflow=workflow,
                version=version,
                subject=subject,
                events=[_event(e) for e in events],
                at_risk=services.settings.sla_at_risk,
            )
        except errors.TaskflowError as exc:
            refused: SlaDryRunPayload = r.refusal_for(exc)
            return refused
        return SlaDryRun.of(answer, services)
