"""``Run.deadline``: a run's deadline across its states, its source, status and milestones."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from taskflow.api.graphql.common.context import Info
from taskflow.core.clocks import run_deadline
from taskflow.core.runs.model import RunView
from taskflow.service.clocks import deadlines


@strawberry.enum(description="Where a run's due instant comes from.")
class DeadlineSource(Enum):
    DURATION = strawberry.enum_value("duration", description="A duration after the start.")
    SUBJECT = strawberry.enum_value("subject", description="A date the subject holds.")


@strawberry.enum(description="How a run stands against its deadline.")
class DeadlineStatus(Enum):
    ON_TIME = strawberry.enum_value(
        "on_time", description="Short of its at-risk instant, or ended by its due instant."
    )
    AT_RISK = strawberry.enum_value("at_risk", description="Live and past its at-risk instant.")
    BREACHED = strawberry.enum_value(
        "breached", description="Past its due instant (a breach on record, or ended after it)."
    )


@strawberry.type(description="A milestone of a run's deadline: at risk, or breached.")
class DeadlineMilestone:
    kind: DeadlineStatus = strawberry.field(description="AT_RISK or BREACHED.")
    at: datetime | None = strawberry.field(
        description="When it falls (null: an at-risk instant the run started past)."
    )
    fired_at: datetime | None = strawberry.field(
        description="The instant it was reached on record (its timer fired; null: not yet)."
    )


@strawberry.type(description="A deadline on a whole run, across its states (docs/sla.md).")
class RunDeadline:
    due_at: datetime = strawberry.field(description="When the run is due.")
    source: DeadlineSource = strawberry.field(
        description="DURATION (after the start) or SUBJECT (a date the subject holds)."
    )
    rule: str = strawberry.field(
        description="The rule in words, e.g. 'at subject.due_date (end of the business day "
        "on uk-london)'."
    )
    status: DeadlineStatus = strawberry.field(
        description="ON_TIME, AT_RISK (past the at-risk share) or BREACHED (a breach on "
        "record, or past its due instant; an ended run: ended after it)."
    )
    breached_at: datetime | None = strawberry.field(
        description="The due instant its breach fired for (on record; null: none)."
    )
    milestones: list[DeadlineMilestone] = strawberry.field(description="At risk, then breached.")


async def deadline_of_run(info: Info, run: RunView) -> RunDeadline | None:
    """The run's deadline (null: its workflow declares none, or the subject gives no date)."""
    found = await deadlines.run_deadline_of(info.context.services, run)
    if found is None:
        return None
    return RunDeadline(
        due_at=found.due.due_at,
        source=DeadlineSource(found.due.source),
        rule=found.due.describe,
        status=DeadlineStatus(found.status),
        breached_at=found.breached_at,
        milestones=[
            DeadlineMilestone(kind=DeadlineStatus(m.kind), at=m.at, fired_at=m.fired_at)
            for m in found.milestones
        ],
    )


__all__ = ["RunDeadline", "deadline_of_run", "run_deadline"]
