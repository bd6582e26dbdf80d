"""``taskflow mcp``: the agent tools over stdio, for a client that starts it (docs/agents.md).

The client (Claude Desktop, an MCP inspector, an agent framework) starts this command and
speaks the Model Context Protocol on its stdin and stdout; every log line goes to stderr.
The agent acts as the principal of ``TASKFLOW_TOKEN`` (a staff token, ``taskflow token``),
checked once here for a clear start and again by each call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from taskflow import errors, logs
from taskflow.cli import runtime
from taskflow.config import config

#: Exit code of a refused command line (as argparse uses).
USAGE = 2


def mcp(args: argparse.Namespace) -> int:
    token = os.environ.get("TASKFLOW_TOKEN", "").strip()
    if args.token_file:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
    if not token:
        runtime.fail(
            "taskflow mcp acts as a principal: set TASKFLOW_TOKEN (or pass --token-file) to a "
            "staff token minted with taskflow token <principal-id>."
        )
        return USAGE
    settings = config.load()
    logs.configure()  # stderr: stdout carries the protocol
    with runtime.database_url(settings) as url, contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_serve(settings, url, token))
    return 0


async def _serve(settings: config.Settings, url: str, token: str) -> int:
    from taskflow.api.graphql import schema as graphql_schema
    from taskflow.api.mcp import server as mcp_server
    from taskflow.service.access import principals

    async with runtime.services(settings, url, apply_migrations=settings.embedded) as services:
        try:
            me = await principals.authenticate(services, token)
        except errors.AuthenticationError as exc:
            return runtime.fail(exc.message)
        schema = graphql_schema.build_schema(introspection=False)
        server = mcp_server.build(schema, lambda: services, lambda ctx: token)
        logging.getLogger("taskflow.mcp").info("agent tools on stdio for %s", me.id)
        await server.run_stdio_async()
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="Serve the agent tools (Model Context Protocol) on stdio, as TASKFLOW_TOKEN's "
        "principal.",
    )
    parser.add_argument(
        "--token-file", help="Read the staff token from this file instead of TASKFLOW_TOKEN."
    )
    parser.set_defaults(handler=mcp)
