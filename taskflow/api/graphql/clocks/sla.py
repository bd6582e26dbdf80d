"""SLA clocks on slots (``Slot.clocks``); notifications are in :mod:`.notifications`."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from enum import Enum

import strawberry
from strawberry.dataloader import DataLoader

from taskflow.api.graphql.common.context import Info
from taskflow.core.clocks import clocks
from taskflow.core.reports import reports
from taskflow.service.clocks import deadlines


@strawberry.enum(description="Where a milestone clock stands.")
class ClockStatus(Enum):
    RUNNING = strawberry.enum_value("running", description="Counting, with time to spare.")
    AT_RISK = strawberry.enum_value(
        "at_risk", description="Counting, past the at-risk share of its budget (75 % by default)."
    )
    PAUSED = strawberry.enum_value("paused", description="Standing still (a pausing state).")
    MET = strawberry.enum_value("met", description="The milestone was reached.")
    BREACHED = strawberry.enum_value("breached", description="The budget ran out unmet.")


@strawberry.enum(description="Which time a duration counts.")
class TimeKind(Enum):
    BUSINESS = strawberry.enum_value("business", description="Working hours of a calendar.")
    REAL = strawberry.enum_value("real", description="Every second of the wall clock.")


@strawberry.type(
    description="A duration (of an SLA clock or in a report): seconds, the same in words, "
    "and which time it counts."
)
class Duration:
    seconds: float = strawberry.field(description="The duration in seconds.")
    kind: TimeKind = strawberry.field(description="Business or real time (never mixed).")
    #: Makes ``text`` when a query asks for it: words cost more than the rest of a report row.
    words: strawberry.Private[Callable[[], str]]

    @strawberry.field(description='In words, e.g. "3h 20m business time" or "2d 4h real time".')
    def text(self) -> str:
        return self.words()

    @classmethod
    def of(cls, value: timedelta, clock: clocks.Clock) -> Duration:
        return cls(
            seconds=value.total_seconds(),
            kind=TimeKind.REAL if clock.calendar is None else TimeKind.BUSINESS,
            words=functools.partial(clocks.human, value, clock),
        )

    @classmethod
    def of_us(cls, us: float | None, kind: str) -> Duration | None:
        """A report's measure in µs of ``kind`` time (``business`` or ``real``); None stays."""
        if us is None:
            return None
        words = functools.partial(_report_words, us, kind)
        return cls(seconds=us / 1_000_000, kind=TimeKind(kind), words=words)


def _report_words(us: float, kind: str) -> str:
    return reports.duration_text(us, kind) or ""


@strawberry.type(description="An interval a clock stood still.")
class ClockPause:
    start: datetime = strawberry.field(description="When it stopped.")
    end: datetime | None = strawberry.field(description="When it ran again; null while paused.")


@strawberry.type(
    description="A deadline a clock had and when it was in force (docs/sla.md, Recompute "
    "policies): the first from the start, one more per budget change mid-run."
)
class ClockTerm:
    since: datetime = strawberry.field(description="When it came into force.")
    until: datetime | None = strawberry.field(description="When a recompute ended it; null: now.")
    due_at: datetime | None = strawberry.field(description="Its deadline; null while paused.")
    budget: str = strawberry.field(description='The budget, e.g. "business.hours(8)".')
    policy: str | None = strawberry.field(
        description="keep-elapsed, restart or retroactive: the recompute that began it; null "
        "for the first."
    )
    breached: bool = strawberry.field(description="Its deadline passed while it was in force.")


@strawberry.type(description="A milestone clock of a slot: its ledger and what follows at now.")
class Clock:
    milestone: str = strawberry.field(
        description="assigned (picked up) or finished (satisfied) within the budget."
    )
    calendar: str = strawberry.field(description='The calendar it counts on, or "real time".')
    budget: Duration = strawberry.field(description="The whole budget.")
    elapsed: Duration = strawberry.field(description="Time counted so far (pauses excluded).")
    remaining: Duration = strawberry.field(description="Time left; zero once breached.")
    due_at: datetime | None = strawberry.field(
        description="When the budget runs out; null while paused."
    )
    status: ClockStatus = strawberry.field(description="Where it stands now.")
    started_at: datetime = strawberry.field(description="When it started (the slot opened).")
    met_at: datetime | None = strawberry.field(description="When the milestone was reached.")
    breached_at: datetime | None = strawberry.field(
        description="When the budget ran out unmet; null if it has not."
    )
    pauses: list[ClockPause] = strawberry.field(description="When it stood still, in order.")
    explain: list[str] = strawberry.field(
        description="The calendar walk behind dueAt: windows consumed, days skipped, pauses."
    )
    terms: list[ClockTerm] = strawberry.field(
        description="Each deadline it had, oldest first, with when it was in force."
    )
    calendar_link: str = strawberry.field(
        description="Which link of the calendar chain named `calendar` (why it is due then): "
        "holder (the holder's own calendar), team (the slot's team's), region (the subject's "
        "country/region), milestone, workflow, budget (the budget names its own calendar, or "
        "real time), or recorded (the calendar kept from when the clock last moved; no link "
        "answers it now)."
    )

    @classmethod
    def of(cls, reading: deadlines.ClockReading) -> Clock:
        c = reading.clock
        return cls(
            milestone=c.milestone,
            calendar=reading.calendar,
            budget=Duration.of(reading.budget, c),
            elapsed=Duration.of(reading.elapsed, c),
            remaining=Duration.of(reading.remaining, c),
            due_at=reading.due_at,
            status=ClockStatus(reading.status),
            started_at=c.started_at,
            met_at=reading.met_at,
            breached_at=reading.breached_at,
            pauses=[ClockPause(start=p.start, end=p.end) for p in c.pauses],
            explain=reading.explain,
            terms=[ClockTerm(**dataclasses.asdict(t)) for t in reading.terms],
            calendar_link=reading.link,
        )


async def clocks_of_slot(info: Info, slot_id: str) -> list[Clock]:
    """The clocks of a slot the caller already sees (batched per request)."""
    loaders = info.context.loaders
    if "clocks" not in loaders:
        services = info.context.services

        async def load(keys: list[str]) -> list[list[Clock]]:
            found = await deadlines.readings(services, keys)
            return [[Clock.of(r) for r in found[k]] for k in keys]

        loaders["clocks"] = DataLoader(load_fn=load)
    result: list[Clock] = await loaders["clocks"].load(slot_id)
    return result
