"""``taskflow token`` and ``taskflow principals load``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.cli import runtime, working_hours_cmd
from taskflow.config import config
from taskflow.service.access import principals, tokens
from taskflow.service.common.container import Services

#: Exit code of a refused command line (as argparse uses).
USAGE = 2


def token(args: argparse.Namespace) -> int:
    settings = config.load()
    if args.revoke:
        return _revoke(settings, args.principal_id)
    ttl = tokens.parse_ttl(args.ttl)
    try:
        tokens.check_ttl(ttl, settings.token_max_ttl)
    except errors.ValidationError as exc:
        runtime.fail(exc.message)
        return USAGE

    async def run(svc: Services) -> str | None:
        principal = await principals.get(svc, args.principal_id)
        if principal is None or not principal.active:
            state = "does not exist" if principal is None else "is deactivated"
            runtime.fail(
                f"principal {args.principal_id!r} {state}: load it first "
                "(taskflow principals load FILE)."
            )
            return None
        return svc.staff_tokens.mint(principal.id, svc.clock.now(), ttl)

    minted = runtime.on_services(settings, run)
    if minted is None:
        return 1
    print(minted)
    return 0


def _revoke(settings: config.Settings, principal_id: str) -> int:
    async def run(svc: Services) -> str:
        principal = await principals.sign_out_everywhere(svc, None, principal_id)
        assert principal.tokens_valid_after is not None
        return principal.tokens_valid_after.isoformat()

    cutoff = runtime.on_services(settings, run)
    print(
        f"taskflow: every token of {principal_id!r} issued before {cutoff} is refused from now "
        f"on; mint a new one with: taskflow token {principal_id}"
    )
    return 0


def load_principals(args: argparse.Namespace) -> int:
    settings = config.load()
    records = principals.parse_file(Path(args.file))

    async def run(svc: Services) -> tuple[int, int]:
        # New principals are created in --workspace (default: the default workspace).
        return await principals.load(svc, records, workspace=args.workspace)

    created, updated = runtime.on_services(settings, run)
    print(f"taskflow: {created} principals created, {updated} updated.")
    return 0


def agent(args: argparse.Namespace) -> int:
    """``taskflow principals agent ID [--workflow W ...] [--off]``: the agent tools' opt-in."""
    settings = config.load()
    workflows = args.workflow or None

    async def run(svc: Services) -> str:
        stored = await principals.set_agent(
            svc, None, args.principal_id, workflows, allow=not args.off
        )
        grants = [g.describe() for g in stored.powers if g.power == "agent"]
        return ", ".join(grants) or "off"

    try:
        shown = runtime.on_services(settings, run)
    except errors.TaskflowError as exc:
        runtime.fail(exc.message)
        return 1
    print(f"taskflow: agent write tools of {args.principal_id!r}: {shown}.")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("token", help="Mint a staff bearer token for a principal.")
    parser.add_argument("principal_id", help="The principal's id.")
    parser.add_argument(
        "--ttl",
        default="30d",
        help="Time to live: 90m, 8h, 30d, 1w (default 30d; at most TASKFLOW_TOKEN_MAX_TTL).",
    )
    parser.add_argument(
        "--revoke",
        action="store_true",
        help="Mint nothing: refuse every token of the principal issued until now "
        "(sign them out everywhere).",
    )
    parser.set_defaults(handler=token)

    parser = subparsers.add_parser("principals", help="Manage principals (load FILE).")
    sub = parser.add_subparsers(dest="principals_command", metavar="ACTION", required=True)
    load = sub.add_parser("load", help="Create or update principals from a JSON or CSV file.")
    load.add_argument("file", help="A .json (list of objects) or .csv file.")
    load.add_argument(
        "--workspace",
        default=None,
        help="The workspace id new principals are created in (default: the default one).",
    )
    load.set_defaults(handler=load_principals)
    grant = sub.add_parser(
        "agent",
        help="Turn a principal's agent write tools (taskflow mcp) on, or off with --off.",
    )
    grant.add_argument("principal_id", help="The principal's id.")
    grant.add_argument(
        "--workflow",
        action="append",
        help="A workflow the agent may act on (repeat; default: every workflow).",
    )
    grant.add_argument("--off", action="store_true", help="Turn them off.")
    grant.set_defaults(handler=agent)
    working_hours_cmd.register(sub)
