"""``taskflow definitions``: the deployed workflow versions and the live runs on each."""

from __future__ import annotations

import argparse
from datetime import UTC
from typing import Any

from taskflow.cli import runtime
from taskflow.config import config
from taskflow.core.definition import migrations
from taskflow.service.common.container import Services
from taskflow.service.versions import deployments


def _when(value: Any) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ") if value is not None else "-"


def definitions(args: argparse.Namespace) -> int:
    """Print one line per recorded or loaded version: digest, first seen, live runs, status."""
    settings = config.load()

    found = runtime.on_services(settings, deployments.listing)
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


def migrate_runs(args: argparse.Namespace) -> int:
    """Print what migrating the live runs of other versions to ``--to`` would do (``--plan``),
    or do it (``--apply``)."""
    if args.plan == args.apply:
        return runtime.fail("say --plan (print what would happen) or --apply (do it).")
    settings = config.load()
    if args.apply:
        from taskflow.service.versions import run_migrations

        async def apply(svc: Services) -> run_migrations.Applied:
            return await run_migrations.apply(svc, args.workflow, args.to, batch=args.batch)

        applied = runtime.on_services(settings, apply, record_definitions=True)
        summary = ", ".join(f"{k} {n}" for k, n in sorted(applied.by_kind.items())) or "none"
        print(
            f"Migrated live runs of {args.workflow!r} to version {args.to} in "
            f"{applied.batches} batch{'es' if applied.batches != 1 else ''}: {summary}"
        )
        return 0

    async def go(svc: Services) -> list[migrations.PlanLine]:
        return await deployments.migration_plan(svc, args.workflow, args.to)

    lines = runtime.on_services(settings, go)
    print(f"Plan: live runs of {args.workflow!r} to version {args.to} (nothing is changed)")
    if not lines:
        print(f"  every live run is on version {args.to} already (or there are none)")
        return 0
    for line in lines:
        step = line.step.describe() if line.step else "none"
        print(
            f"  v{line.from_version} {line.state:<20} {line.runs:>8} run"
            f"{'s' if line.runs != 1 else ' '}  {step:<24} {line.effect}"
        )
    summary = ", ".join(f"{kind} {count}" for kind, count in migrations.totals(lines).items())
    print(f"Total: {summary}")
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

    parser = subparsers.add_parser(
        "runs", help="Operate on live runs (migrate them between workflow versions)."
    )
    commands = parser.add_subparsers(dest="runs_command", metavar="COMMAND", required=True)
    migrate = commands.add_parser(
        "migrate",
        help="Plan moving live runs of a workflow to a version (per its declared migrations).",
        description=(
            "Per version and state of the live runs not on VERSION: how many runs, the step the "
            "target version declares for them (stay, to STATE, cancel) and which clocks change. "
            "--apply migrates them in batches, each one transaction."
        ),
    )
    migrate.add_argument("workflow", help="the workflow's name, e.g. expense-approval")
    migrate.add_argument(
        "--to", type=int, required=True, metavar="VERSION", help="the target version"
    )
    migrate.add_argument("--plan", action="store_true", help="print the plan; change nothing")
    migrate.add_argument(
        "--apply",
        action="store_true",
        help="migrate the runs, a batch per transaction (resumable: run it again)",
    )
    migrate.add_argument("--batch", type=int, default=100, help="runs per transaction")
    migrate.set_defaults(handler=migrate_runs)
