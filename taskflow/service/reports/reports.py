"""Report use cases: the SLA report, a run's lead time, the at-risk list (leads and managers).

Each reads in one transaction after making sure the calendars' working
intervals cover the years involved (``store.business_time.ensure``, its own
short transaction, only when years are missing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from taskflow import errors
from taskflow.core.access import access as access_rules
from taskflow.core.access.principals import Principal
from taskflow.core.clocks import clocks
from taskflow.core.reports import reports
from taskflow.core.slots import filters
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.slots import views
from taskflow.store.clocks import business_time
from taskflow.store.common import db
from taskflow.store.reports import at_risk as at_risk_sql
from taskflow.store.reports import lead_time, report_sql, slot_measures
from taskflow.store.reports import run_deadlines as run_deadline_rows

#: Years around the report window materialised too: clocks started before ``from``
#: and due instants after ``to`` stay inside the covered span.
_MARGIN_YEARS = 1


def require_lead(actor: Principal) -> access.Scope:
    """Reports are for leads, managers and admins, over the workflows (and teams) their
    grants reach; anyone else gets FORBIDDEN. Returns that scope."""
    return access.require_reports(actor)


def scoped(actor: Principal, request: reports.ReportRequest) -> reports.ReportRequest:
    """The request narrowed to where the actor's grants reach (FORBIDDEN outside them)."""
    found = require_lead(actor)
    access.require_report_workflow(found, request.filter.workflow)
    return replace(request, filter=replace(request.filter, scope=found))


def workflow_calendars(services: Services) -> dict[str, str | None]:
    """Each workflow's default calendar (its latest version's), for slots without a clock."""
    return {d.name: d.calendar for d in services.catalog.latest()}


def day_lengths(services: Services) -> dict[str, int]:
    """Each calendar's working-day length in µs (``business.days(n)`` budgets)."""
    return {
        name: clocks.day_length(services.calendars.get(name)) // timedelta(microseconds=1)
        for name in services.calendars.names()
    }


async def cover(services: Services, start: datetime, end: datetime) -> bool:
    """Materialise every calendar's intervals for the years ``start..end`` touches; True
    when some were missing (see :func:`reader`)."""
    cals = [services.calendars.get(n) for n in sorted(services.calendars.names())]
    return await business_time.ensure(
        services.db, cals, start.year - _MARGIN_YEARS, end.year + 1 + _MARGIN_YEARS
    )


def reader(
    services: Services, covered_now: bool
) -> Callable[[], AbstractAsyncContextManager[db.Connection]]:
    """Where a report reads: the replica when configured (``Database.reading``), but the
    primary when :func:`cover` has just written calendar years the replica may not have."""
    return services.db.transaction if covered_now else services.db.reading


def at_risk_left(services: Services) -> float:
    """Share of a budget left below which a running clock is at risk (TASKFLOW_SLA_AT_RISK)."""
    return 1.0 - services.settings.sla_at_risk


def zone_of(services: Services, zone: str) -> str:
    """A calendar's zone when ``zone`` names a calendar; else ``zone`` itself (IANA)."""
    if zone in services.calendars.names():
        return str(services.calendars.get(zone).tz.key)
    return zone


async def sla_report(
    services: Services, actor: Principal, request: reports.ReportRequest
) -> list[reports.ReportRow]:
    """The report's rows, aggregated on the database."""
    [rows] = await sla_reports(services, actor, [request])
    return rows


async def sla_reports(
    services: Services, actor: Principal, requests: list[reports.ReportRequest]
) -> list[list[reports.ReportRow]]:
    """Several reports of one instant (the report page's table, charts and totals): one
    access and calendar check, then each statement on its own connection, all at once
    (the database spreads them over its cores)."""
    require_lead(actor)
    now = services.clock.now()
    for request in requests:
        reports.bound(request, now, services.settings.report_max_days)
    checked = [
        reports.check(replace(scoped(actor, request), zone=zone_of(services, request.zone)))
        for request in requests
    ]
    read = reader(
        services,
        await cover(
            services,
            min(r.start for r in checked),
            max(max(r.end for r in checked), now),
        ),
    )

    calendars, days, share = (
        workflow_calendars(services),
        day_lengths(services),
        at_risk_left(services),
    )

    async def one(request: reports.ReportRequest) -> list[reports.ReportRow]:
        async with read() as conn:
            return await report_sql.report(conn, request, now, calendars, days, share)

    return list(await asyncio.gather(*(one(request) for request in checked)))


async def measure_ended_slots(services: Services, start: datetime | None = None) -> int:
    """Store report measures on ended slots that have none, and the time to pickup of live
    slots picked up without it kept (opened from ``start``, else all).

    The write path stores them when a slot ends (is picked up); this fills in
    slots that did so before it did (after the migrations that added them), so
    reports stop measuring those on read. Idempotent; returns how many slots
    were measured.
    """
    now = services.clock.now()
    async with services.db.connection() as conn:
        first = await slot_measures.first_unmeasured(
            conn, start or datetime.min.replace(tzinfo=UTC)
        )
    if first is None:
        return 0
    await cover(services, first, now)
    async with services.db.transaction() as conn:
        measured = await slot_measures.backfill(
            conn,
            now,
            first,
            now + timedelta(microseconds=1),
            workflow_calendars(services),
            day_lengths(services),
        )
    if measured:
        async with services.db.connection() as conn:
            await slot_measures.tidy_after_backfill(conn)
    return measured


async def run_lead_time(services: Services, run_id: str) -> lead_time.LeadTime:
    """Wall-clock lead time of one run, worked and waiting, in total and per state.

    The caller has already been allowed to read the run (it is a field of ``Run``).
    """
    async with services.db.reading() as conn:
        return await lead_time.of_run(conn, run_id, services.clock.now())


async def at_risk(
    services: Services,
    actor: Principal,
    f: filters.SlotFilter,
    *,
    first: int,
    after: at_risk_sql.Cursor | None,
) -> tuple[list[tuple[views.SlotRow, int]], int, bool]:
    """Live slots at risk now, least business time left first: (rows with µs left, total, more)."""
    f = replace(f, scope=require_lead(actor))
    if not 0 < first <= views.MAX_FIRST:
        raise errors.ValidationError(
            f"first must be between 1 and {views.MAX_FIRST}; got {first}.", field="first"
        )
    now = services.clock.now()
    async with reader(services, await cover(services, now, now))() as conn:
        found, total = await at_risk_sql.at_risk(
            conn,
            now=now,
            day_us=day_lengths(services),
            at_risk_left=at_risk_left(services),
            f=f,
            after=after,
            limit=first + 1,
        )
    return found[:first], total, len(found) > first


async def run_deadlines(
    services: Services, actor: Principal, request: reports.ReportRequest
) -> list[run_deadline_rows.DeadlineCounts]:
    """Runs started in the window meeting and missing their run deadline, per workflow whose
    runs the actor's grants reach whole (a grant narrowed to teams reaches slots, not runs)."""
    found = require_lead(actor)
    access.require_report_workflow(found, request.filter.workflow)
    names = [
        d.name
        for d in services.catalog.latest()
        if d.deadline is not None
        and request.filter.workflow in (None, d.name)
        and access_rules.covers_whole_workflow(found, d.name)
    ]
    async with services.db.reading() as conn:
        return await run_deadline_rows.by_workflow(
            conn, request.start, request.end, names, services.clock.now()
        )
