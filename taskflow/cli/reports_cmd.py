"""``taskflow measure-slots``: store report measures on slots that ended (or were picked up)
before they were kept."""

from __future__ import annotations

import argparse
from typing import Any

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.reports import reports


def run_measure(args: argparse.Namespace) -> int:
    settings = config.load()

    measured = runtime.on_services(settings, reports.measure_ended_slots)
    print(
        f"taskflow measure-slots: {measured} slots measured "
        "(ended ones, and live ones' time to pickup)."
    )
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "measure-slots",
        help="Store SLA report measures on slots that ended or were picked up without them "
        "(once, after upgrading).",
    )
    parser.set_defaults(handler=run_measure)
