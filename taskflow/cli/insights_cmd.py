"""``taskflow insights``: per workflow and version, live runs, waiting on people or steps,
needing attention, started / finished / cancelled in a window, end-to-end percentiles in
wall and business time, and regression flags; with ``--workflow``, its pipeline of states
and its funnel (docs/insights.md). Whoever runs the command on the server's shell
reads every workflow, as an admin."""

from __future__ import annotations

import argparse
from typing import Any

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.core.access import principals
from taskflow.core.history.insight_text import percentiles as _percentiles
from taskflow.core.history.insight_text import rate as _rate
from taskflow.service.common.container import Services
from taskflow.service.history import insights

#: The command line reads as an admin: it runs with the server's own settings and database.
OPERATOR = principals.Principal(
    id="taskflow-cli", display_name="taskflow insights", roles=(principals.ADMIN_ROLE,)
)


def lines(found: insights.Insights) -> list[str]:
    """The report as printed: one line per workflow version, then the pipeline."""
    out = [f"window {found.since.isoformat()} .. {found.until.isoformat()}"]
    out.append(
        "workflow v  live people steps attention started finished cancelled  "
        "p50 / p95 / p99  business p50 / p95 / p99"
    )
    for r in found.rows:
        out.append(
            f"{r.workflow} v{r.version}  {r.live} {r.live - r.on_steps} {r.on_steps} "
            f"{r.attention} {r.started} {r.finished} {r.cancelled}  "
            f"{_percentiles(r.end_to_end, r.finished)}  "
            f"business {_percentiles(r.end_to_end_business, r.business_samples)}"
        )
        for said in found.regressions.get((r.workflow, r.version), []):
            out.append(f"  REGRESSION v{r.version}: {said}")
    if found.pipeline is not None:
        out.append(
            "state  live now  time in state p50 / p95  reopened  "
            "pickup p50 / p95  business p50 / p95  refused"
        )
        for s in found.pipeline:
            out.append(
                f"{s.state}  {s.live}  {_percentiles(s.took, s.samples, 2)}  "
                f"{_rate(s.reopened, s.samples)}  {_percentiles(s.pickup, s.picked, 2)}  "
                f"business {_percentiles(s.pickup_business, s.picked, 2)}  "
                f"{_rate(s.refused, s.slots)}"
            )
    if found.funnel is not None:
        out.append("funnel: state  reached  live there  completed there  cancelled there")
        for f in found.funnel:
            out.append(f"{f.state}  {f.reached}  {f.live}  {f.completed}  {f.cancelled}")
    return out


def run_insights(args: argparse.Namespace) -> int:
    settings = config.load()

    async def go(svc: Services) -> insights.Insights:
        return await insights.insights(svc, OPERATOR, args.window, args.workflow)

    for line in lines(runtime.on_services(settings, go)):
        print(line)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "insights",
        help="Per workflow and version: live runs, waiting on people or steps, needing "
        "attention, started, finished and cancelled in a window, end-to-end percentiles "
        "(wall and business), regressions; with --workflow its pipeline and funnel "
        "(docs/insights.md).",
    )
    parser.add_argument(
        "--window",
        choices=list(insights.WINDOWS),
        default="24h",
        help="the window counted, ending now",
    )
    parser.add_argument("--workflow", default=None, help="only this one, with its pipeline")
    parser.set_defaults(handler=run_insights)
