"""``taskflow forecast backtest --weeks N``: replay the last N weeks of slots through the
breach forecast and print its precision and recall against what happened (docs/forecast.md).
It reads every workflow as an admin, like ``taskflow insights``."""

from __future__ import annotations

import argparse
from typing import Any

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.core.access import principals
from taskflow.service.common.container import Services
from taskflow.service.reports import forecast

OPERATOR = principals.Principal(
    id="taskflow-cli", display_name="taskflow forecast", roles=(principals.ADMIN_ROLE,)
)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def lines(found: forecast.Backtest, threshold: float) -> list[str]:
    """The backtest as printed."""
    return [
        f"window {found.since.isoformat()} .. {found.until.isoformat()}",
        f"slots forecast at half their budget: {found.forecast} "
        f"({found.no_history} without enough history)",
        f"at risk from {threshold:.2f}: {found.true_positive} breached (true), "
        f"{found.false_positive} met (false alarms), {found.false_negative} breaches missed, "
        f"{found.true_negative} met and not flagged",
        f"precision {_share(found.precision)}  recall {_share(found.recall)}",
    ]


def run_backtest(args: argparse.Namespace) -> int:
    settings = config.load()
    threshold = settings.forecast_threshold if args.threshold is None else args.threshold
    if args.weeks < 1:
        return runtime.fail("--weeks must be 1 or more")
    if not 0.0 <= threshold <= 1.0:
        return runtime.fail("--threshold must be between 0 and 1")

    async def go(svc: Services) -> forecast.Backtest:
        return await forecast.backtest(svc, OPERATOR, args.weeks, args.workflow, threshold)

    for line in lines(runtime.on_services(settings, go), threshold):
        print(line)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "forecast", help="The breach forecast: backtest it on the history (docs/forecast.md)."
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    back = verbs.add_parser(
        "backtest",
        help="Replay the last N weeks and print the forecast's precision and recall.",
    )
    back.add_argument("--weeks", type=int, default=4, help="weeks replayed, ending now")
    back.add_argument("--workflow", default=None, help="only this workflow")
    back.add_argument(
        "--threshold", type=float, default=None, help="probability from which a slot is at risk"
    )
    back.set_defaults(handler=run_backtest)
