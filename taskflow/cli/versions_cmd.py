"""``taskflow definitions``: the deployed workflow versions and the live runs on each."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC
from typing import Any

from taskflow import config
from taskflow.cli import runtime
from taskflow.service import deployments


def _when(value: Any) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ") if value is not None else "-"


def definitions(args: argparse.Namespace) -> int:
    """Print one line per recorded or loaded version: digest, first seen, live runs, status."""
    settings = config.load()

    async def go(url: str) -> list[deployments.Deployed]:
        async with runtime.services(settings, url, apply_migrations=settings.embedded) as svc:
            return await deployments.listing(svc)

    with runtime.database_url(settings) as url:
        found = asyncio.run(go(url))
    if not found:
        print("no workflow definitions are deployed or loaded")
        return 0
    print(
        f"{'workflow':<28} {'version':>7}  {'digest':<19}  {'first seen':<17}  "
        f"{'live runs':>9}  status"
    )
    for d in found:
        print(
            f"{d.name:<28} {d.version:>7}  {d.digest[:19] or '-':<19}  "
            f"{_when(d.first_seen_at):<17}  {d.live_runs:>9}  {d.status}"
        )
    return 0


def register(subparsers: Any) -> None:
    """Add ``definitions`` to the ``taskflow`` command."""
    parser = subparsers.add_parser(
        "definitions",
        help="List deployed workflow versions and the live runs on each.",
        description=(
            "Every workflow version recorded as deployed (or loaded now), its digest, when it "
            "was first seen, how many live runs are on it, and whether the code loaded now "
            "defines it (loaded, drifted, not loaded, new)."
        ),
    )
    parser.set_defaults(handler=definitions)
