"""``taskflow prune``: prune ended runs past their retention now (the worker does it every
ten minutes), or with ``--dry-run`` count what it would prune."""

from __future__ import annotations

import argparse
from typing import Any

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.common.container import Services
from taskflow.service.operate import retention


def run_prune(args: argparse.Namespace) -> int:
    settings = config.load()

    async def go(svc: Services) -> list[str]:
        due = await retention.due(svc)
        if not due:
            return [
                "taskflow prune: no workflow sets a retention and TASKFLOW_RETENTION_DAYS "
                "is unset: nothing is ever pruned."
            ]
        if args.dry_run:
            return [
                f"{d.workflow}: {d.runs} ended runs older than {d.days} days would be pruned"
                for d in due
            ]
        dropped = await retention.keep_months(svc)
        pruned = await retention.prune_due(svc, max_batches=args.max_batches)
        return [f"timeline partition {name} dropped whole" for name in dropped] + [
            f"{d.workflow}: {pruned.get(d.workflow, 0)} ended runs older than {d.days} days pruned"
            for d in due
        ]

    for line in runtime.on_services(settings, go):
        print(line)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "prune",
        help="Prune ended runs older than their workflow's retention (or "
        "TASKFLOW_RETENTION_DAYS) now; the worker does it every ten minutes.",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="only count, per workflow, the runs that would be pruned",
    )
    parser.add_argument(
        "--max-batches",
        type=int,
        default=100,
        help=f"batches of {retention.BATCH} runs per workflow, each one transaction",
    )
    parser.set_defaults(handler=run_prune)
