"""SLA reports in GraphQL: ``slaReport``, ``Run.leadTime`` and the types they return."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from taskflow.api.graphql.clocks import sla
from taskflow.api.graphql.common import relay, targets
from taskflow.api.graphql.common.context import Info, caller
from taskflow.api.graphql.slots import slot_type
from taskflow.core.access.principals import Principal
from taskflow.core.reports import reports
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.reports import reports as report_service

REAL, BUSINESS = "real", "business"


@strawberry.enum(description="A way to group an SLA report; several may be combined.")
class ReportGrouping(Enum):
    WORKFLOW = strawberry.enum_value(reports.WORKFLOW, description="By workflow.")
    VERSION = strawberry.enum_value(
        reports.VERSION,
        description="By the definition version the slot's run is on now (add WORKFLOW to "
        "tell workflows apart; a migrated run counts under its new version).",
    )
    STATE = strawberry.enum_value(reports.STATE, description="By the state the slot belongs to.")
    SLOT = strawberry.enum_value(
        reports.SLOT, description="By slot name (add WORKFLOW to tell workflows apart)."
    )
    AUDIENCE = strawberry.enum_value(
        reports.AUDIENCE,
        description="By team: each role: or group: key of the slot's candidates (a slot "
        "counts once in each of its teams).",
    )
    HOLDER = strawberry.enum_value(
        reports.HOLDER, description="By who holds (or satisfied) the slot; null: nobody."
    )
    PRIORITY = strawberry.enum_value(
        reports.PRIORITY, description="By priority (1 is the most urgent)."
    )
    PERIOD = strawberry.enum_value(
        reports.PERIOD, description="By the period the slot opened in (see period and zone)."
    )


@strawberry.enum(description="The length of a report period, cut in the report's zone.")
class ReportPeriod(Enum):
    DAY = strawberry.enum_value("day", description="Local days, from midnight.")
    WEEK = strawberry.enum_value("week", description="Local weeks, from Monday midnight.")
    MONTH = strawberry.enum_value("month", description="Local calendar months.")


@strawberry.enum(description="The SLA milestone a report measures.")
class ReportMilestone(Enum):
    ASSIGNED = strawberry.enum_value("assigned", description="Picked up within its budget.")
    FINISHED = strawberry.enum_value("finished", description="Satisfied within its budget.")


@strawberry.input(description="Narrows the slots a report counts. All given filters must match.")
class SlaReportFilter(targets.SlotPlaceFilter):
    audience: list[str] | None = strawberry.field(
        default=None, description="Only slots whose candidates include any of these keys."
    )
    holder: str | None = strawberry.field(
        default=None, description="Only slots held (or satisfied) by this login."
    )
    priority: int | None = strawberry.field(default=None, description="Only this priority.")

    def to_filter(self) -> reports.ReportFilter:
        return reports.ReportFilter(
            workflow=self.workflow,
            state=self.state,
            slot=self.slot,
            audience=tuple(self.audience or ()),
            holder=self.holder,
            priority=self.priority,
        )


@strawberry.type(description="p50, p90 and p95 of a duration (null when nothing was measured).")
class DurationPercentiles:
    p50: sla.Duration | None = strawberry.field(description="The median.")
    p90: sla.Duration | None = strawberry.field(description="90 % took at most this long.")
    p95: sla.Duration | None = strawberry.field(description="95 % took at most this long.")

    @classmethod
    def of(cls, p: reports.Percentiles, kind: str) -> DurationPercentiles:
        return cls(
            p50=sla.Duration.of_us(p.p50, kind),
            p90=sla.Duration.of_us(p.p90, kind),
            p95=sla.Duration.of_us(p.p95, kind),
        )


@strawberry.type(description="A time measured in business time and, separately, in real time.")
class MeasuredTime:
    business: DurationPercentiles = strawberry.field(
        description="Working time on the slot's calendar (its clock's, else its workflow's), "
        "paused intervals excluded."
    )
    real: DurationPercentiles = strawberry.field(
        description="Wall-clock time, paused intervals excluded."
    )


@strawberry.type(description="Wall-clock lead time split into worked and waiting.")
class LeadTimeSplit:
    total: sla.Duration = strawberry.field(description="From start (or opening) to end or now.")
    worked: sla.Duration = strawberry.field(
        description="While someone held a slot (claimed or assigned) and no clock was paused."
    )
    waiting: sla.Duration = strawberry.field(
        description="The rest: open, pending, paused, or between states."
    )
    on_children: sla.Duration = strawberry.field(
        description="The part of waiting spent waiting on awaited child runs (from the state "
        "that started them being entered to each child's end; several at once count once)."
    )
    worked_share: float | None = strawberry.field(
        description="worked / total, 0..1 (null for a zero total)."
    )

    @classmethod
    def of(cls, total_us: int, worked_us: int, children_us: int = 0) -> LeadTimeSplit:
        def d(us: int) -> sla.Duration:
            found = sla.Duration.of_us(us, REAL)
            assert found is not None
            return found

        return cls(
            total=d(total_us),
            worked=d(worked_us),
            waiting=d(total_us - worked_us),
            on_children=d(children_us),
            worked_share=worked_us / total_us if total_us else None,
        )


@strawberry.type(description="Lead time spent in one state, over every visit.")
class StateLeadTime:
    state: str = strawberry.field(description="The state.")
    lead_time: LeadTimeSplit = strawberry.field(description="Its time, worked and waiting.")


@strawberry.type(
    description="A run's wall-clock lead time, worked and waiting, in total and per state."
)
class RunLeadTime:
    total: LeadTimeSplit = strawberry.field(description="From start to end (or now).")
    states: list[StateLeadTime] = strawberry.field(
        description="Per state, in the order first entered."
    )


@strawberry.type(description="One group of an SLA report: volumes, outcomes and times.")
class SlaReportRow:
    workflow: str | None = strawberry.field(description="The group's workflow (WORKFLOW).")
    version: int | None = strawberry.field(description="The group's definition version (VERSION).")
    state: str | None = strawberry.field(description="The group's state (STATE).")
    slot: str | None = strawberry.field(description="The group's slot name (SLOT).")
    audience: str | None = strawberry.field(description="The group's team key (AUDIENCE).")
    holder: str | None = strawberry.field(description="The group's holder (HOLDER).")
    priority: int | None = strawberry.field(description="The group's priority (PRIORITY).")
    period_start: datetime | None = strawberry.field(
        description="The period's first instant in UTC (PERIOD): local midnight in the zone "
        "(its first occurrence when clocks go back; the change when they skip midnight)."
    )
    period_label: str | None = strawberry.field(
        description="The period as the zone's local date, e.g. '2026-11-23' (PERIOD)."
    )
    opened: int = strawberry.field(description="Slots that opened in the window.")
    met: int = strawberry.field(description="Of those, milestones met in time.")
    breached: int = strawberry.field(description="Of those, milestones breached (late or overdue).")
    still_open: int = strawberry.field(description="Of those, still pending, open or claimed now.")
    breach_rate: float | None = strawberry.field(
        description="breached / (met + breached), 0..1; null when none was decided."
    )
    breach_rate_text: str = strawberry.field(description="The breach rate as '12.5 %' or '-'.")
    at_risk_now: int = strawberry.field(
        description="Of those, live now with 25 % or less of their budget left."
    )
    breached_now: int = strawberry.field(description="Of those, live now and past due.")
    #: The row the times are made from when a query asks for them (most ask for few).
    measured: strawberry.Private[reports.ReportRow]

    @strawberry.field(
        description="Time to pickup: opening to first claim or assignment (or completion)."
    )
    def pickup(self) -> MeasuredTime:
        return MeasuredTime(
            business=DurationPercentiles.of(self.measured.pickup_business, BUSINESS),
            real=DurationPercentiles.of(self.measured.pickup_real, REAL),
        )

    @strawberry.field(description="Time to completion: opening to satisfied.")
    def completion(self) -> MeasuredTime:
        return MeasuredTime(
            business=DurationPercentiles.of(self.measured.completion_business, BUSINESS),
            real=DurationPercentiles.of(self.measured.completion_real, REAL),
        )

    @strawberry.field(
        description="The slots' wall-clock time (opening to satisfied, cancelled or now), summed."
    )
    def lead_time(self) -> LeadTimeSplit:
        return LeadTimeSplit.of(self.measured.lead_us, self.measured.worked_us)

    @classmethod
    def of(cls, row: reports.ReportRow, zone: str) -> SlaReportRow:
        from zoneinfo import ZoneInfo

        local = row.period_start.astimezone(ZoneInfo(zone)) if row.period_start else None
        return relay.copied(
            cls,
            row,
            period_start=row.period_start.astimezone(ZoneInfo("UTC")) if row.period_start else None,
            period_label=local.date().isoformat() if local else None,
            breach_rate_text=reports.percent_text(row.breach_rate),
            measured=row,
        )


@strawberry.type(description="One workflow's runs against their run deadline.")
class RunDeadlineCounts:
    workflow: str = strawberry.field(description="The workflow.")
    runs: int = strawberry.field(description="Runs started in the window with a deadline.")
    met: int = strawberry.field(description="Ended by their due instant, no breach fired.")
    missed: int = strawberry.field(
        description="Breach fired, or ended after their due instant, or live past it."
    )
    open: int = strawberry.field(description="Live and not yet due.")


@strawberry.type(description="An SLA report: slots opened in [from, to), grouped.")
class SlaReport:
    from_: datetime = strawberry.field(name="from", description="The window's start.")
    to: datetime = strawberry.field(description="The window's end (exclusive).")
    generated_at: datetime = strawberry.field(description="The 'now' of at-risk and breached-now.")
    zone: str = strawberry.field(description="The IANA zone periods are cut in.")
    rows: list[SlaReportRow] = strawberry.field(
        description="One per group; with PERIOD, every period of the window for every group "
        "seen (empty periods as zeros)."
    )
    request: strawberry.Private[reports.ReportRequest]

    @strawberry.field(
        description="Runs started in the window that have a run deadline, per workflow: how "
        "many met it, missed it, or are still open short of it (workflows your grants reach "
        'whole; docs/sla.md, "Run deadlines").'
    )
    async def run_deadlines(self, info: Info) -> list[RunDeadlineCounts]:
        me = await caller(info)
        found = await report_service.run_deadlines(info.context.services, me, self.request)
        return [relay.copied(RunDeadlineCounts, c) for c in found]


def request_of(
    start: datetime,
    end: datetime | None,
    now: datetime,
    group_by: list[ReportGrouping] | None,
    milestone: ReportMilestone | None,
    period: ReportPeriod,
    zone: str,
    f: SlaReportFilter | None,
) -> reports.ReportRequest:
    """The core request for the GraphQL arguments (``to`` defaults to now)."""
    return reports.ReportRequest(
        start=start,
        end=end or now,
        group_by=tuple(g.name.lower() for g in group_by or ()),
        milestone=milestone.name.lower() if milestone else None,
        period=period.name.lower(),
        zone=zone,
        filter=(f or SlaReportFilter()).to_filter(),
    )


@strawberry.type
class ReportQueries:
    @strawberry.field(
        description="SLA report for leads, managers and admins (others get FORBIDDEN): per group, "
        "slots opened, met, breached, still open, breach rate, p50/p90/p95 time to pickup and "
        "to completion in business and real time, at risk and breached now, lead time."
    )
    async def sla_report(
        self,
        info: Info,
        from_: Annotated[
            datetime,
            strawberry.argument(name="from", description="Slots opened at or after this instant."),
        ],
        to: Annotated[
            datetime | None,
            strawberry.argument(description="... and before this one (default: now)."),
        ] = None,
        group_by: Annotated[
            list[ReportGrouping] | None,
            strawberry.argument(description="Groupings to combine (none: one total row)."),
        ] = None,
        milestone: Annotated[
            ReportMilestone | None,
            strawberry.argument(
                description="The milestone measured (default: each slot's finished clock, "
                "else its assigned one)."
            ),
        ] = None,
        period: Annotated[
            ReportPeriod, strawberry.argument(description="Period length for PERIOD.")
        ] = ReportPeriod.WEEK,
        zone: Annotated[
            str,
            strawberry.argument(
                description="Where periods are cut: a calendar's name (its zone) or an IANA zone."
            ),
        ] = "UTC",
        filter: Annotated[
            SlaReportFilter | None, strawberry.argument(description="Narrow the slots counted.")
        ] = None,
    ) -> SlaReport:
        me = await caller(info)
        services = info.context.services
        now = services.clock.now()
        request = request_of(from_, to, now, group_by, milestone, period, zone, filter)
        rows = await report_service.sla_report(services, me, request)
        real_zone = report_service.zone_of(services, request.zone)
        return SlaReport(
            from_=request.start,
            to=request.end,
            generated_at=now,
            zone=real_zone,
            rows=[SlaReportRow.of(r, real_zone) for r in rows],
            request=request,
        )


async def lead_time_of_run(info: Info, run_id: str) -> RunLeadTime:
    """``Run.leadTime``: the run was already found visible to the caller."""
    found = await report_service.run_lead_time(info.context.services, run_id)
    return RunLeadTime(
        total=LeadTimeSplit.of(found.total_us, found.worked_us, found.children_us),
        states=[
            StateLeadTime(
                state=s.state,
                lead_time=LeadTimeSplit.of(s.total_us, s.worked_us, s.children_us),
            )
            for s in found.states
        ],
    )


async def at_risk_connection(
    info: Info, me: Principal, f: SlotFilter, first: int, after: str | None
) -> relay.Connection[slot_type.SlotType]:
    """``work(filter: {atRisk: true})``: at-risk slots, least business time left first."""
    cursor = None
    if after:
        left, slot_id = relay.decode_typed(after, "bigint", "uuid")
        cursor = (left, slot_id)
    found, total, has_next = await report_service.at_risk(
        info.context.services, me, f, first=first, after=cursor
    )
    edges = [
        relay.Edge(
            cursor=relay.encode_cursor(str(left), row.slot.id), node=slot_type.slot_from_row(row)
        )
        for row, left in found
    ]
    return relay.page(edges, has_next, total)
