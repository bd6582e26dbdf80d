"""``taskflow workspaces list|create|suspend|resume|export`` (docs/workspaces.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from taskflow import errors
from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.common.container import Services
from taskflow.service.workspaces import workspaces


def _shown(w: Any) -> str:
    limits = f"runs {w.max_runs}, open slots {w.max_open_slots}, rpm {w.requests_per_minute}"
    return f"{w.id}  {w.name}  {w.status}  ({limits})"


def _run(use: Any) -> int:
    try:
        answer = runtime.on_services(config.load(), use)
    except errors.TaskflowError as exc:
        runtime.fail(exc.message)
        return 1
    print(answer)
    return 0


def list_them(args: argparse.Namespace) -> int:
    async def run(svc: Services) -> str:
        return "\n".join(_shown(w) for w in await workspaces.every(svc))

    return _run(run)


def create(args: argparse.Namespace) -> int:
    async def run(svc: Services) -> str:
        made = await workspaces.create(
            svc,
            args.name,
            max_runs=args.max_runs,
            max_open_slots=args.max_open_slots,
            requests_per_minute=args.requests_per_minute,
        )
        return _shown(made)

    return _run(run)


def status(args: argparse.Namespace) -> int:
    async def run(svc: Services) -> str:
        return _shown(await workspaces.set_status(svc, args.workspace_id, args.status))

    return _run(run)


def limits(args: argparse.Namespace) -> int:
    async def run(svc: Services) -> str:
        given = (args.max_runs, args.max_open_slots, args.requests_per_minute)
        return _shown(await workspaces.set_limits(svc, args.workspace_id, given))

    return _run(run)


def export(args: argparse.Namespace) -> int:
    async def run(svc: Services) -> str:
        return json.dumps(await workspaces.export(svc, args.workspace_id), indent=1, default=str)

    code = _run(run)
    sys.stdout.flush()
    return code


def _limit_options(parser: argparse.ArgumentParser) -> None:
    for option in ("--max-runs", "--max-open-slots", "--requests-per-minute"):
        parser.add_argument(option, type=int, default=None, help="A limit (default: none).")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("workspaces", help="Manage workspaces (tenants).")
    sub = parser.add_subparsers(dest="workspaces_command", metavar="ACTION", required=True)
    sub.add_parser("list", help="Every workspace.").set_defaults(handler=list_them)
    made = sub.add_parser("create", help="Create a workspace.")
    made.add_argument("name", help="Its name (unique).")
    _limit_options(made)
    made.set_defaults(handler=create)
    limited = sub.add_parser("limits", help="Set a workspace's limits (those not given: none).")
    limited.add_argument("workspace_id", help="The workspace's id.")
    _limit_options(limited)
    limited.set_defaults(handler=limits)
    for verb, state in (("suspend", "suspended"), ("resume", "active")):
        one = sub.add_parser(verb, help=f"Set a workspace {state}.")
        one.add_argument("workspace_id", help="The workspace's id.")
        one.set_defaults(handler=status, status=state)
    out = sub.add_parser("export", help="Everything a workspace holds, as JSON on stdout.")
    out.add_argument("workspace_id", help="The workspace's id.")
    out.set_defaults(handler=export)
