"""GraphQL of workflow insights (``insights``; docs/insights.md)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.history import regressions
from taskflow.service.history import insights as service


@strawberry.enum(description="The window insights count over, ending now.")
class InsightsWindow(Enum):
    HOUR = strawberry.enum_value("1h", description="The last hour.")
    DAY = strawberry.enum_value("24h", description="The last 24 hours.")
    WEEK = strawberry.enum_value("7d", description="The last 7 days.")
    MONTH = strawberry.enum_value("30d", description="The last 30 days.")


@strawberry.type(
    description="Percentiles of a time in seconds (wall or business, as the field says), "
    "with their sample size."
)
class Percentiles:
    p50: float | None = strawberry.field(description="Median, in seconds (null: no sample).")
    p95: float | None = strawberry.field(description="95th percentile, in seconds.")
    p99: float | None = strawberry.field(description="99th percentile (end to end only).")
    samples: int = strawberry.field(description="How many runs or visits they are taken over.")
    few_samples: bool = strawberry.field(
        description=f"True when fewer than {service.FEW} samples: read them with care."
    )

    @classmethod
    def of(cls, values: tuple[float, ...] | None, samples: int) -> Percentiles:
        got = list(values or ())
        got += [None] * (3 - len(got))  # type: ignore[list-item]
        return cls(
            p50=got[0], p95=got[1], p99=got[2], samples=samples, few_samples=samples < service.FEW
        )


@strawberry.type(description="One workflow version's figures over the window.")
class WorkflowInsight:
    workflow: str = strawberry.field(description="The workflow.")
    version: int = strawberry.field(description="The definition version its runs are on.")
    live: int = strawberry.field(description="Runs active now.")
    waiting_on_people: int = strawberry.field(
        description="Active runs not waiting on an automatic step (slots open or held)."
    )
    waiting_on_steps: int = strawberry.field(
        description="Active runs with an automatic step due or running."
    )
    needing_attention: int = strawberry.field(
        description="Active runs with an item on the needs-attention list."
    )
    started: int = strawberry.field(description="Runs started in the window.")
    finished: int = strawberry.field(description="Runs completed in the window.")
    cancelled: int = strawberry.field(description="Runs cancelled in the window.")
    failed: int = strawberry.field(
        description="Runs that ended in the window as failures: cancelled, or completed in a "
        "terminal state marked failure."
    )
    end_to_end: Percentiles = strawberry.field(
        description="Start to completion of the runs completed in the window (wall time)."
    )
    end_to_end_business: Percentiles = strawberry.field(
        description="The same in business time on the workflow's calendar."
    )
    breach_rate: float | None = strawberry.field(
        description="Percent of the slots with a milestone clock ended in the window that "
        "breached it (null: none ended)."
    )
    failure_rate: float | None = strawberry.field(
        description="Percent of the runs ended in the window that failed (cancelled, or "
        "completed in a terminal state marked failure; null: none ended)."
    )
    regressions: list[str] = strawberry.field(
        description="What rose by more than "
        f"{regressions.THRESHOLD_POINTS:g} points over the workflow's previous version listed "
        "(breach or failure rate); empty: nothing flagged."
    )

    @classmethod
    def of(cls, r: service.VersionRow, flagged: list[str]) -> WorkflowInsight:
        return cls(
            workflow=r.workflow,
            version=r.version,
            live=r.live,
            waiting_on_people=r.live - r.on_steps,
            waiting_on_steps=r.on_steps,
            needing_attention=r.attention,
            started=r.started,
            finished=r.finished,
            cancelled=r.cancelled,
            failed=r.failed,
            end_to_end=Percentiles.of(r.end_to_end, r.finished),
            end_to_end_business=Percentiles.of(r.end_to_end_business, r.business_samples),
            breach_rate=regressions.percent(r.breached, r.measured),
            failure_rate=regressions.percent(r.failed, r.finished + r.cancelled),
            regressions=flagged,
        )


@strawberry.type(description="A state of a workflow's pipeline.")
class PipelineState:
    state: str = strawberry.field(description="The state.")
    live: int = strawberry.field(description="Active runs there now.")
    time_in_state: Percentiles = strawberry.field(
        description="Wall time of the visits of it that ended in the window (after undos)."
    )
    reopen_rate: float | None = strawberry.field(
        description="Percent of those visits that returned to the state (the run had been "
        "in it before); null: no visit ended."
    )
    pickup_latency: Percentiles = strawberry.field(
        description="Opening to first claim or assignment of its slots ended in the window, "
        "wall time minus pauses."
    )
    pickup_latency_business: Percentiles = strawberry.field(
        description="The same in business time on each slot's own calendar."
    )
    refusal_rate: float | None = strawberry.field(
        description="Percent of its slots ended in the window that a holder gave back "
        "(released) at least once; null: none ended."
    )

    @classmethod
    def of(cls, s: service.StateRow) -> PipelineState:
        return cls(
            state=s.state,
            live=s.live,
            time_in_state=Percentiles.of(s.took, s.samples),
            reopen_rate=regressions.percent(s.reopened, s.samples),
            pickup_latency=Percentiles.of(s.pickup, s.picked),
            pickup_latency_business=Percentiles.of(s.pickup_business, s.picked),
            refusal_rate=regressions.percent(s.refused, s.slots),
        )


@strawberry.type(description="A state the runs started in the window reached.")
class FunnelState:
    state: str = strawberry.field(description="The state.")
    reached: int = strawberry.field(description="Runs started in the window that entered it.")
    live: int = strawberry.field(description="Of those, active there now.")
    completed: int = strawberry.field(description="Of those, completed there.")
    cancelled: int = strawberry.field(description="Of those, cancelled while there.")


@strawberry.type(description="Workflow insights over a window ending now.")
class Insights:
    since: datetime = strawberry.field(description="The window's start.")
    until: datetime = strawberry.field(description="Now.")
    rows: list[WorkflowInsight] = strawberry.field(
        description="One row per workflow and version, newest version first."
    )
    pipeline: list[PipelineState] | None = strawberry.field(
        description="The workflow's states (only when a workflow is asked for)."
    )
    funnel: list[FunnelState] | None = strawberry.field(
        description="The runs started in the window: how many reached each state and where "
        "they are now, most reached first (only when a workflow is asked for)."
    )


@strawberry.type
class InsightsQueries:
    @strawberry.field(
        description="Per workflow and version: live runs, waiting on people or steps, started, "
        "finished and cancelled in the window, end-to-end percentiles; with workflow, its "
        "pipeline. Leads and managers of whole workflows, admins (docs/insights.md)."
    )
    async def insights(
        self,
        info: Info,
        window: Annotated[
            InsightsWindow, strawberry.argument(description="The window, ending now.")
        ] = InsightsWindow.DAY,
        workflow: Annotated[
            str | None, strawberry.argument(description="Only this workflow, with its pipeline.")
        ] = None,
    ) -> Insights:
        me = await caller(info)
        found = await service.insights(info.context.services, me, str(window.value), workflow)
        return Insights(
            since=found.since,
            until=found.until,
            rows=[
                WorkflowInsight.of(r, found.regressions.get((r.workflow, r.version), []))
                for r in found.rows
            ],
            pipeline=[PipelineState.of(s) for s in found.pipeline]
            if found.pipeline is not None
            else None,
            funnel=[
                FunnelState(
                    state=f.state,
                    reached=f.reached,
                    live=f.live,
                    completed=f.completed,
                    cancelled=f.cancelled,
                )
                for f in found.funnel
            ]
            if found.funnel is not None
            else None,
        )
