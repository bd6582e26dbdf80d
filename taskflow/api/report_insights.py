"""The report page's insights sections: a row per workflow version, then one workflow's
pipeline of states and its funnel (docs/insights.md, "On the report page"). The same
service, access and wording as the ``insights`` query and ``taskflow insights``; this module
only turns the figures into the cells the template prints."""

from __future__ import annotations

from dataclasses import dataclass

from taskflow.core.access import principals
from taskflow.core.history import insight_text as said
from taskflow.service.common.container import Services
from taskflow.service.history import insights as insight_service


@dataclass(frozen=True)
class InsightRow:
    """A workflow version's insights as the page's table shows them."""

    workflow: str
    version: int
    counts: tuple[int, ...]  # live, started, finished, cancelled, failed
    end_to_end: str
    business: str
    breach_rate: str
    failure_rate: str
    regressions: list[str]


@dataclass(frozen=True)
class PipelineRow:
    """A state of the chosen workflow's pipeline, as the page shows it."""

    state: str
    live: int
    time_in_state: str
    reopen_rate: str
    pickup: str
    pickup_business: str
    refusal_rate: str


@dataclass(frozen=True)
class FunnelRow:
    """A state the runs started in the window reached, and where those runs are now."""

    state: str
    reached: int
    #: ``reached`` as a share of the runs started in the window (the most reached state's).
    share: str
    live: int
    completed: int
    cancelled: int


@dataclass(frozen=True)
class Section:
    """What the page's insights sections show."""

    found: insight_service.Insights
    rows: list[InsightRow]
    #: The workflows the pipeline can be asked of (those listed, and the one chosen).
    workflows: list[str]
    #: The workflow whose pipeline and funnel are shown (None: nothing listed to show).
    chosen: str | None
    pipeline: list[PipelineRow]
    funnel: list[FunnelRow]


def _row(r: insight_service.VersionRow, flags: list[str]) -> InsightRow:
    return InsightRow(
        r.workflow,
        r.version,
        (r.live, r.started, r.finished, r.cancelled, r.failed),
        said.percentiles(r.end_to_end, r.finished),
        said.percentiles(r.end_to_end_business, r.business_samples),
        said.rate(r.breached, r.measured),
        said.rate(r.failed, r.finished + r.cancelled),
        flags,
    )


def _stage(s: insight_service.StateRow) -> PipelineRow:
    return PipelineRow(
        s.state,
        s.live,
        said.percentiles(s.took, s.samples, 2),
        said.rate_of(s.reopened, s.samples),
        said.percentiles(s.pickup, s.picked, 2),
        said.percentiles(s.pickup_business, s.picked, 2),
        said.rate_of(s.refused, s.slots),
    )


def _funnel(rows: list[insight_service.FunnelRow]) -> list[FunnelRow]:
    started = max((f.reached for f in rows), default=0)  # the initial state: all of them
    return [
        FunnelRow(
            f.state, f.reached, said.rate(f.reached, started), f.live, f.completed, f.cancelled
        )
        for f in rows
    ]


async def section(
    services: Services, me: principals.Principal, window: str, workflow: str | None
) -> Section:
    """Every workflow version ``me`` oversees as a whole over ``window``, and the pipeline
    and funnel of ``workflow`` (default: the first workflow listed). An unknown workflow is
    NOT_FOUND, one ``me`` does not oversee whole FORBIDDEN, as in ``insights``."""
    found = await insight_service.insights(services, me, window)
    listed = sorted({r.workflow for r in found.rows})
    chosen = workflow or next(iter(listed), None)
    pipeline: list[PipelineRow] = []
    funnel: list[FunnelRow] = []
    if chosen is not None:
        stages, reached = await insight_service.pipeline_and_funnel(services, me, window, chosen)
        pipeline = [_stage(s) for s in stages]
        funnel = _funnel(reached)
    return Section(
        found,
        [_row(r, found.regressions.get((r.workflow, r.version), [])) for r in found.rows],
        sorted({*listed, *([chosen] if chosen else [])}),
        chosen,
        pipeline,
        funnel,
    )
