"""What an SLA dry run answers (``dry_run.py`` plays the timeline): the run at the end, each
slot's milestone clocks with the walk behind their due instants, the lines it would write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskflow.core.clocks import calendars, clocks, terms
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import RunView, SlotView

#: Timeline kinds counted as escalations in the answer.
ESCALATIONS = frozenset({"slot.escalated", "slot.reassigned", "slot.reassign_skipped"})
ESCALATIONS |= {"slot.priority_raised", "timeout.fired"}


@dataclass(frozen=True)
class Line:
    """A line of the played timeline: when, what, on which slot, why, details."""

    at: datetime
    kind: str
    slot: str | None
    reason: str | None
    details: Mapping[str, Any]


@dataclass(frozen=True)
class MilestoneAnswer:
    """A slot's milestone clock at the end of the timeline, and the walk behind its due."""

    slot: str
    visit: int
    milestone: str
    calendar: str
    budget: str
    started_at: datetime
    due_at: datetime | None
    met_at: datetime | None
    breached_at: datetime | None
    status: str
    terms: list[terms.Term]
    #: Why it is due then: the calendar windows consumed, the days and holidays skipped.
    explain: list[str]
    #: The ledger all of the above derive from (``slaDryRun`` reads it as a ``Clock``).
    ledger: clocks.Clock


@dataclass(frozen=True)
class Answer:
    """What the timeline would do: the run at the end, each milestone, the firings."""

    workflow: str
    version: int
    started_at: datetime
    ended_at: datetime
    state: str
    status: str
    milestones: list[MilestoneAnswer]
    reminders: list[Line]
    escalations: list[Line]
    breaches: list[Line]
    timeline: list[Line]
    firings: int


def answer(
    definition: Definition,
    registry: calendars.Registry,
    at_risk: float,
    run: RunView,
    slots: Mapping[str, SlotView],
    *,
    lines: list[Line],
    firings: int,
    start: datetime,
    end: datetime,
) -> Answer:
    """The answer of a timeline played from ``start`` to ``end``: the run as it ended, each
    slot's milestone clocks read at ``end`` (``at_risk``: the at-risk share), the firings."""
    milestones = []
    for view in sorted(slots.values(), key=lambda v: (v.visit, v.opened_at or start, v.id)):
        for c in view.clocks:
            cal = clocks.calendar_of(registry, c)
            milestones.append(
                MilestoneAnswer(
                    view.name,
                    view.visit,
                    c.milestone,
                    c.calendar or "real time",
                    c.budget.describe(),
                    c.started_at,
                    clocks.due_at(c, cal),
                    c.met_at,
                    clocks.breached_at(c, cal, end, registry),
                    clocks.status(c, cal, end, at_risk, registry),
                    terms.in_force(c, cal, end, registry),
                    clocks.explain(c, cal),
                    c,
                )
            )
    return Answer(
        definition.name,
        definition.version,
        start,
        end,
        run.state,
        str(run.status),
        milestones,
        reminders=[x for x in lines if x.kind == "reminder.fired"],
        escalations=[x for x in lines if x.kind in ESCALATIONS],
        breaches=[x for x in lines if x.kind == "clock.breached"],
        timeline=lines,
        firings=firings,
    )
