"""The SLA report page ``/reports/sla`` and its CSV export ``/reports/sla.csv``.

Plain server-rendered HTML (Jinja, autoescaped) with inline SVG charts and no
script. Authentication is a staff token in an ``Authorization: Bearer`` header,
or the report session the page's sign-in form opens (``report_signin``: a
short-lived server-side session whose id alone is in the cookie). Leads,
managers and admins only, as in GraphQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from litestar import Request, get
from litestar.datastructures import State
from litestar.response import Response

from taskflow import errors
from taskflow.api import charts, report_insights, report_signin, report_table, report_view
from taskflow.core.access import principals
from taskflow.core.common import refusals
from taskflow.core.history import insight_text as said
from taskflow.core.reports import reports
from taskflow.service.common.container import Services
from taskflow.service.history import insights as insight_service
from taskflow.service.reports import reports as report_service

HTML = report_view.HTML
HEADERS = report_view.HEADERS
_html = report_view.html
#: The default window: the last eight weeks.
DEFAULT_DAYS = 56
#: The insights section's default window (``insights=1h|24h|7d|30d``).
INSIGHTS_WINDOW = "7d"


def _services(state: State) -> Services:
    services: Services = state.services
    return services


@dataclass(frozen=True)
class PageRequest:
    """The page's query string, checked: the report asked and how the page charts it."""

    report: reports.ReportRequest
    #: The non-period grouping the charts compare (the table's first, else workflow).
    chart_group: str
    query: str


def _instant(text: str, zone: ZoneInfo, name: str) -> datetime:
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), zone)
        found = datetime.fromisoformat(text)
    except ValueError:
        raise errors.ValidationError(
            f"{name} must be a date (2026-11-23) or an instant with an offset.", field=name
        ) from None
    if found.tzinfo is None:
        found = found.replace(tzinfo=zone)
    return found


def parse(services: Services, params: Mapping[str, list[str]]) -> PageRequest:
    """The report a query string asks for (defaults: the last 8 weeks by workflow and week)."""

    def one(name: str, default: str) -> str:
        values = params.get(name) or [default]
        return values[0] or default

    zone_name = report_service.zone_of(services, one("zone", "UTC"))
    try:
        zone = ZoneInfo(zone_name)
    except (ValueError, KeyError):
        raise errors.ValidationError(f"Unknown zone {zone_name!r}.", field="zone") from None
    now = services.clock.now()
    today = now.astimezone(zone).date()
    start = _instant(one("from", (today - timedelta(days=DEFAULT_DAYS)).isoformat()), zone, "from")
    end = _instant(one("to", now.isoformat()), zone, "to")
    group_by = tuple(params.get("group") or [reports.WORKFLOW])
    milestone = one("milestone", "") or None
    request = reports.ReportRequest(
        start, end, group_by, milestone, one("period", "week"), zone_name
    )
    reports.bound(request, now, services.settings.report_max_days)
    request = reports.check(request)
    chart_group = next(iter(request.keys), reports.WORKFLOW)
    pairs = [("from", start.isoformat()), ("to", end.isoformat()), ("zone", one("zone", "UTC"))]
    pairs += [("group", g) for g in request.group_by] + [("period", request.period)]
    pairs += [("milestone", milestone)] if milestone else []
    return PageRequest(request, chart_group, urlencode(pairs))


async def _charts(
    services: Services, me: principals.Principal, page: PageRequest
) -> tuple[list[reports.ReportRow], dict[str, str], int, int]:
    """The table's rows, the charts' SVG, and the at-risk and breached-now totals."""
    report = page.report
    by_period = replace(report, group_by=(reports.PERIOD, page.chart_group))
    by_group = replace(report, group_by=(page.chart_group,))
    # Totals from an ungrouped report: a slot in two teams counts once.
    asked = [report, by_period, replace(report, group_by=())]
    if report.group_by != by_group.group_by:
        asked.append(by_group)
    # At once, of one instant (the page took the sum of three or four reports, 2.7-4.5 s
    # at 1 M slots; bench/README.md).
    found = await report_service.sla_reports(services, me, asked)
    rows, periodic, [total] = found[:3]
    grouped = found[3] if len(found) > 3 else rows
    zone = report.zone
    labels = sorted({report_table.label(r, by_group.group_by, zone) for r in grouped})
    periods = sorted({report_table.keys(r, (reports.PERIOD,), zone)[0] for r in periodic})
    rate: dict[tuple[str, str], float | None] = {
        (
            report_table.label(r, by_group.group_by, zone),
            report_table.keys(r, (reports.PERIOD,), zone)[0],
        ): r.breach_rate
        for r in periodic
    }
    by_label = {report_table.label(r, by_group.group_by, zone): r for r in grouped}
    # More lines than the palette has styles would not read: the busiest groups, in order.
    lines = charts.busiest(labels, lambda g: by_label[g].opened)
    title = report_table.DIMENSION_TITLES[page.chart_group]
    if len(lines) < len(labels):
        title += f" (the {len(lines)} with the most slots of {len(labels)}; the table has all)"
    shown = [rate.get((g, p)) for g in lines for p in periods]
    peak = max((v for v in shown if v is not None), default=0.0)
    svg = {
        "breach": charts.line_chart(
            f"Breach rate per {report.period} and {title}",
            periods,
            [charts.Series(g, tuple(rate.get((g, p)) for p in periods)) for g in lines],
            y_max=1.0 if peak > 0.5 or peak == 0 else 0.5,
        ),
    }
    hour = report_table.HOUR_US

    def p90(r: reports.ReportRow, name: str) -> float | None:
        value: float | None = getattr(r, name).p90
        return None if value is None else value / hour

    svg["p90"] = charts.bar_chart(
        "p90 time to pickup and to completion (business hours)",
        labels,
        [
            charts.Series("pickup", tuple(p90(by_label[g], "pickup_business") for g in labels)),
            charts.Series(
                "completion", tuple(p90(by_label[g], "completion_business") for g in labels)
            ),
        ],
        unit="h",
    )
    svg["risk"] = charts.bar_chart(
        "At risk and breached now (live slots opened in the window)",
        labels,
        [
            charts.Series("at risk", tuple(float(by_label[g].at_risk_now) for g in labels)),
            charts.Series("breached", tuple(float(by_label[g].breached_now) for g in labels)),
        ],
        unit=("slot", "slots"),
        fmt="{:.0f}",
    )
    return rows, svg, total.at_risk_now, total.breached_now


def _form_values(params: Mapping[str, list[str]]) -> dict[str, Any]:
    return {
        "from_": (params.get("from") or [""])[0],
        "to": (params.get("to") or [""])[0],
        "zone": (params.get("zone") or ["UTC"])[0],
        "period": (params.get("period") or ["week"])[0],
        "groups": params.get("group") or [reports.WORKFLOW],
        "milestone": (params.get("milestone") or [""])[0],
        "cols": report_table.groups_of(params.get("cols")),
        "insights": (params.get("insights") or [INSIGHTS_WINDOW])[0],
        "insight_windows": list(insight_service.WINDOWS),
        "workflow": (params.get("workflow") or [""])[0] or None,
        "from_placeholder": "",
    }


def _used(form: dict[str, Any], report: reports.ReportRequest) -> dict[str, Any]:
    """The form showing the window the report actually used (the default, or as bounded)."""
    zone = ZoneInfo(report.zone)
    start = report.start.astimezone(zone)
    shown = start.date().isoformat() if start.time() == time() else start.isoformat()
    return {**form, "from_": shown, "from_placeholder": shown}


def _params(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
    return {k: request.query_params.getall(k) for k in request.query_params}


@get("/reports/sla", include_in_schema=False)
async def sla_page(request: Request[Any, Any, Any], state: State) -> Response[str]:
    """The report page (a sign-in form when no valid token comes with the request)."""
    services = _services(state)
    me = await report_signin.caller(services, request)
    params = _params(request)
    common = {
        "form": _form_values(params),
        "dimensions": report_table.DIMENSION_TITLES,
        "column_groups": report_table.COLUMN_GROUPS,
    }
    if me is None:
        return _html("sign_in.html", 401, error=None, next=str(request.url.path))
    try:
        page = parse(services, params)
        rows, svg, at_risk, breached = await _charts(services, me, page)
        form = common["form"]
        insights = await report_insights.section(services, me, form["insights"], form["workflow"])
    except errors.Forbidden as refused:
        return _html("refused.html", 403, me=me, message=refused.message)
    except (errors.ValidationError, errors.NotFound, refusals.OutsideRetention) as invalid:
        # An insights window reaching before the runs kept: a 400 naming the retention.
        return _html("report.html", 400, me=me, error=invalid.message, page=None, **common)
    report = page.report
    common["form"] = _used(common["form"], report)
    columns = report_table.columns_of(common["form"]["cols"])
    return _html(
        "report.html",
        200,
        me=me,
        error=None,
        page=page,
        report=report,
        generated_at=services.clock.now(),
        key_titles=report_table.key_titles(report.group_by),
        columns=columns,
        header_groups=report_table.header_groups(columns),
        rows=[
            (
                report_table.keys(r, report.group_by, report.zone),
                [report_table.cell_text(c, r) for c in columns],
            )
            for r in rows
        ],
        svg=svg,
        at_risk=at_risk,
        breached=breached,
        insights=insights,
        few=said.FEW,
        **common,
    )


@get("/reports/sla.csv", include_in_schema=False)
async def sla_csv(request: Request[Any, Any, Any], state: State) -> Response[str]:
    """The page's table as CSV (same query string)."""
    services = _services(state)
    me = await report_signin.caller(services, request)
    if me is None:
        return Response(
            "Sign in at /reports/sla first, or send a bearer token.\n",
            status_code=401,
            media_type="text/plain",
        )
    try:
        page = parse(services, _params(request))
        rows = await report_service.sla_report(services, me, page.report)
    except errors.Forbidden as refused:
        return Response(refused.message + "\n", status_code=403, media_type="text/plain")
    except errors.ValidationError as invalid:
        return Response(invalid.message + "\n", status_code=400, media_type="text/plain")
    report = page.report
    body = report_table.to_csv(rows, report.group_by, report.zone)
    name = f"sla-report-{report.start.date()}-{report.end.date()}.csv"
    return Response(
        body,
        media_type="text/csv",
        headers={**HEADERS, "Content-Disposition": f'attachment; filename="{name}"'},
    )


ROUTES = [sla_page, sla_csv, *report_signin.ROUTES]
