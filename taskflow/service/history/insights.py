"""Workflow insights: per workflow and version, what is live and waiting on whom or needing
attention, what started and ended in a window, how long runs take end to end (wall and
business time), which version's breach or failure rate rose; a workflow's pipeline of
states and funnel (docs/insights.md). Leads and managers of the whole workflow, and admins."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow import errors
from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.history import insight_text, regressions
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.history import history
from taskflow.service.operate import attention
from taskflow.service.reports import reports
from taskflow.store.history import insights as store

#: The windows insights are read over.
WINDOWS = {
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
#: The rows' types, for the API (which reads no store module).
VersionRow = store.VersionRow
StateRow = store.StateRow
FunnelRow = store.FunnelRow
#: Percentiles over fewer samples than this are flagged as such (their number is shown).
FEW = insight_text.FEW


@dataclass(frozen=True)
class Insights:
    """The rows of the workflow versions the caller oversees, and one workflow's pipeline."""

    since: datetime
    until: datetime
    rows: list[store.VersionRow]
    pipeline: list[store.StateRow] | None
    funnel: list[store.FunnelRow] | None
    #: What rose against the previous version, per (workflow, version) flagged.
    regressions: dict[tuple[str, int], list[str]]


async def insights(
    services: Services, actor: Principal, window: str, workflow: str | None = None
) -> Insights:
    """Rows per workflow and version (newest version first) over ``window`` ("1h", "24h",
    "7d", "30d"); with ``workflow``, only its rows and its pipeline."""
    found, since, now = _checked(services, actor, window, workflow)
    # Business time reads materialised calendars; a year just written may not be on the
    # replica yet, so that read goes to the primary (reports.reader).
    covered_now = await reports.cover(services, since, now)
    calendars = reports.workflow_calendars(services)
    async with reports.reader(services, covered_now)() as conn:
        failures = regressions.failure_states(services.catalog)
        rows = await store.by_version(
            conn, since, calendars, attention.windows(services), workflow, failures
        )
        pipeline = await store.pipeline(conn, workflow, since) if workflow else None
        funnel = await store.funnel(conn, workflow, since) if workflow else None
    rows = [
        r
        for r in rows
        if (workflow is None or r.workflow == workflow)
        and rules.covers_whole_workflow(found, r.workflow)
    ]
    return Insights(
        since=since,
        until=now,
        rows=rows,
        pipeline=pipeline,
        funnel=funnel,
        regressions=regressions.flags([_rates(r) for r in rows]),
    )


async def pipeline_and_funnel(
    services: Services, actor: Principal, window: str, workflow: str
) -> tuple[list[store.StateRow], list[store.FunnelRow]]:
    """``workflow``'s pipeline and funnel over ``window`` alone (the report page lists the
    rows already), with the same checks and refusals as :func:`insights`."""
    _, since, _ = _checked(services, actor, window, workflow)
    # Stored measures only (no business time computed here): the replica may answer.
    async with services.db.reading() as conn:
        return await store.pipeline(conn, workflow, since), await store.funnel(
            conn, workflow, since
        )


def _checked(
    services: Services, actor: Principal, window: str, workflow: str | None
) -> tuple[rules.Scope, datetime, datetime]:
    """The caller's report grants and the window's bounds, once the window is known, the
    workflow exists and is overseen whole, and the window starts within retention."""
    if window not in WINDOWS:
        raise errors.ValidationError(
            f"Unknown window {window!r}: use one of {', '.join(WINDOWS)}.", field="window"
        )
    found = access.require_reports(actor)
    if workflow is not None:
        services.catalog.get(workflow)  # NOT_FOUND names the workflows there are
        if not rules.covers_whole_workflow(found, workflow):
            raise errors.Forbidden(
                f"Insights cover every run of {workflow!r}: they need a lead or manager grant "
                "on the whole workflow (not narrowed to teams)."
            )
    now = services.clock.now()
    since = now - WINDOWS[window]
    history.check_instant(services, since, workflow)
    return found, since, now


def _rates(r: store.VersionRow) -> regressions.Rates:
    return regressions.Rates(
        workflow=r.workflow,
        version=r.version,
        measured=r.measured,
        breached=r.breached,
        ended=r.finished + r.cancelled,
        failed=r.failed,
    )
